package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.vrdma.harness.perf.CpuIdleState;
import org.vrdma.harness.perf.ThreadCpu;
import picocli.CommandLine;

class BenchCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void printsBothSidesTheRatiosAndTheMachine() {
        assertThat(run("bench", "--duration", "0.05", "--size", "8192", "--rounds", "3"))
                .isZero();
        String text = out.toString();
        assertThat(text).contains("vrdma bench: real time: 2 hosts in this process");
        assertThat(text)
                .containsPattern(
                        "machine: \\d+ cores .*Netty (EPOLL|NIO), GSO (on|off), GRO (on|off), ICRC checked on receive on");
        assertThat(text).contains("workload", "vRDMA", "kernel TCP", "vRDMA/TCP");
        assertThat(text)
                .containsPattern("bandwidth, 1 stream, 8192 B messages \\[Gbit/s\\] +[0-9.]+ +[0-9.]+ +[0-9.]+");
        assertThat(text).containsPattern("latency p50, 64 B, half RTT \\[us\\] +[0-9.]+ +[0-9.]+ +[0-9.]+");
        assertThat(text).contains("latency p99 [us]", "latency p99.9 [us]");
        assertThat(text).contains("data intact").doesNotContain("CORRUPT");
        assertThat(text).containsPattern("targets: bandwidth >= 2.00x TCP: [0-9.]+x (met|NOT met)");
        // Busy polling is on by default, with what it did per round trip.
        assertThat(text)
                .containsPattern(
                        "vRDMA busy polling \\(both loops\\): 100 us per loop; per round trip [0-9.]+ datagrams"
                                + " found while polling \\([0-9.]+ read directly, without epoll\\), [0-9.]+ empty polls,"
                                + " [0-9.]+ spins ran out \\(the loop slept\\); \\d+ polls cut short .*gaps <100 us \\d+,"
                                + " <300 us \\d+, <1 ms \\d+, longer \\d+\\), backed off \\d+ ms of the run's \\d+ ms per"
                                + " loop \\(back-offs begun: \\d+ ms\\), back-off halved \\d+ times after hits without a"
                                + " lost core; \\d+ short gaps");
        assertThat(text).containsPattern("per WRITE [0-9.]+ datagrams .*[0-9.]+ read bursts, [0-9.]+ recvmmsg calls");
        assertThat(text).containsPattern("vRDMA warm-up: WRITE [0-9.]+ s.*; SEND ping-pong [0-9.]+ s");
        // The kernel's UDP floors in the same run, and what the loops' scheduling did per round trip.
        assertThat(text)
                .containsPattern(
                        "floors: kernel UDP ping-pong, 64 B, one datagram per hop, Java sockets: blocking reads"
                                + " p50 [0-9.]+ us \\(p99 [0-9.]+, \\d+ round trips\\); through epoll as an event loop"
                                + " \\(epoll_wait, read, write per hop\\) p50 [0-9.]+ us \\(p99 [0-9.]+, \\d+ round trips\\);"
                                + " vRDMA/epoll floor p50 [0-9.]+x, TCP/epoll floor [0-9.]+x");
        assertThat(text)
                .containsPattern(
                        "kernel TCP ping-pong polling as the loops do \\(non-blocking reads, a yield after each"
                                + " empty read, no back-off; the table's TCP blocks in its reads\\): p50 [0-9.]+ us \\(p99"
                                + " [0-9.]+, [1-9]\\d* round trips\\); vRDMA/polling TCP p50 [0-9.]+x");
        assertThat(text)
                .containsPattern("vRDMA context switches of both event loops per round trip: [0-9.]+ voluntary"
                        + " \\(sleeps\\), [0-9.]+ involuntary \\(preemptions\\)");
        assertThat(text)
                .containsPattern(
                        "CPU .*: [0-9.]+ us per 8192 B WRITE \\(sender's loop [0-9.]+ us \\(of the run: ran \\d+%"
                                + "(, waited for a core \\d+%, asleep \\d+%)?\\), receiver's [0-9.]+ us \\(ran \\d+%"
                                + "(, waited for a core \\d+%, asleep \\d+%)?\\)\\), [0-9.]+ us per round trip");
        // Where the kernel keeps scheduler statistics, each loop's idle time is split by cause.
        if (java.nio.file.Files.exists(java.nio.file.Path.of("/proc/thread-self/schedstat"))) {
            assertThat(text)
                    .containsPattern("receiver's [0-9.]+ us \\(ran \\d+%, waited for a core \\d+%, asleep \\d+%\\)");
        }
        // Kernel TCP's CPU per message, next to the event loops' per WRITE.
        assertThat(text)
                .containsPattern("kernel TCP CPU \\(writer \\+ reader threads, user\\+system\\): [0-9.]+ us per 8192 B"
                        + " \\(writer [0-9.]+ us, reader [0-9.]+ us\\); TCP CPU / vRDMA CPU per 8192 B: [0-9.]+");
        // Where the payload was sent from, and the sendmmsg calls that sent it.
        assertThat(text)
                .containsPattern(
                        "per WRITE [0-9.]+ datagrams \\([0-9.]+ ACKs\\) \\([0-9.]+ with the payload sent from the"
                                + " memory region\\), [0-9.]+ GSO sends, [0-9.]+ flushes \\([0-9.]+ sendmmsg calls\\)");
        // Unmodified perftest through the native library, in rounds interleaved with the Java path.
        assertThat(text).contains("perftest over the emulator: unmodified ib_write_bw / ib_send_lat");
        assertThat(text)
                .containsPattern("perftest against the Java path: 3 rounds of \\d+ WRITEs of 8192 B each, the two paths"
                        + " back to back, which goes first alternating; load average [0-9.]+ before, [0-9.]+ after");
        // One line per round, the Java path first in rounds 1 and 3, then the medians.
        String number = " +[0-9.]+";
        String round = number.repeat(3) + " \\|" + number.repeat(2) + " \\|" + number.repeat(3);
        assertThat(text).containsPattern("(?m)^1 J" + round + "$");
        assertThat(text).containsPattern("(?m)^2 P" + round + "$");
        assertThat(text).containsPattern("(?m)^3 J" + round + "$");
        assertThat(text).doesNotContainPattern("(?m)^4 [JP]");
        assertThat(text).containsPattern("(?m)^median" + round + "$");
        assertThat(text).containsPattern("perftest's CPU leaves out its fixed \\d+ ms of start-up per run");
        assertThat(text)
                .containsPattern(
                        "ib_write_bw, 8192 B, median \\[Gbit/s\\] +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+");
        assertThat(text).containsPattern("ib_send_lat, 2 B, typical one-way \\[us\\] +[0-9.]+");
        assertThat(text)
                .containsPattern(
                        "target: perftest bandwidth >= 0.80x the Java path: [0-9.]+x \\(median over median of 3"
                                + " interleaved rounds; per round [0-9.]+-[0-9.]+x\\) (met|NOT met)");
        assertThat(text)
                .containsPattern("ib_write_bw CPU per 8192 B WRITE \\(user\\+system, medians\\): [0-9.]+ us both hosts'"
                        + " event loops, [0-9.]+ us the whole vNIC process, [0-9.]+ us the two perftest processes;"
                        + " [0-9.]+ doorbells, [0-9.]+ futex wake-ups per WRITE");
        assertThat(text)
                .containsPattern("ib_write_bw event-loop CPU per WRITE against the Java path's: [0-9.]+ us against"
                        + " [0-9.]+ us \\([0-9.]+x\\)");
        assertThat(text)
                .containsPattern("CPU per WRITE of everything each path runs .*: [0-9.]+ us against [0-9.]+ us"
                        + " \\([0-9.]+x\\)");
        assertThat(text)
                .containsPattern("this process's CPU per WRITE by threads \\(medians, us\\): Java path loops [0-9.]+,"
                        + " JIT [0-9.]+, GC [0-9.]+, control and doorbells [0-9.]+, other [0-9.]+; perftest loops"
                        + " [0-9.]+, JIT [0-9.]+");
        // The same underlay and ACK counters as the Java path's, per perftest WRITE.
        assertThat(text)
                .containsPattern("ib_write_bw underlay \\(both hosts\\) per WRITE: [0-9.]+ datagrams \\([0-9.]+ ACKs\\)"
                        + " \\([0-9.]+ with the payload sent from the memory region\\), [0-9.]+ GSO sends,"
                        + " [0-9.]+ flushes, [0-9.]+ read bursts, [0-9.]+ recvmmsg calls; \\d+ packets"
                        + " retransmitted after \\d+ timeouts; [0-9.]+ B of heap allocated by the event loops");
        // Per round: both paths' timeouts, resends, loops' share of the transfer and JIT, perftest's doorbells.
        assertThat(text)
                .containsPattern("perftest warm-up: \\d+ ib_write_bw runs of the rounds' size, the last with"
                        + " \\d+ ms of JIT compiler CPU \\(until below 20 ms\\)");
        assertThat(text).containsPattern("ib_write_bw settings: TX depth \\d+, CQ Moderation \\d+");
        String diag = " +\\d+ +\\d+ +\\d+ +\\d+ +\\d+ \\| +\\d+ +\\d+ +\\d+ +\\d+ +\\d+ +[0-9.]+ +[0-9.]+ +\\d+$";
        assertThat(text).containsPattern("(?m)^1 J" + diag);
        assertThat(text).containsPattern("(?m)^2 P" + diag);
        assertThat(text).containsPattern("(?m)^3 J" + diag);
        assertThat(text).containsPattern("ib_send_lat per round trip: [0-9.]+ doorbells");
        // Both perftest processes' buffers are zero-copy in every round: the vNICs made no process_vm call.
        assertThat(text)
                .contains("ib_write_bw registered memory: 6 regions zero-copy, 0 through"
                        + " process_vm_readv/writev (0 memfds refused), 0 process_vm calls");
    }

    @Test
    void perftestOnlyRunsTheComparisonAlone() {
        assertThat(run("bench", "--duration", "0.05", "--size", "8192", "--rounds", "2", "--perftest-only"))
                .isZero();
        String text = out.toString();
        assertThat(text).contains("vrdma bench --perftest-only: real time: 2 hosts in this process");
        assertThat(text).containsPattern("machine: \\d+ cores .*load average");
        assertThat(text)
                .containsPattern("perftest against the Java path: 2 rounds of \\d+ WRITEs of 8192 B each, the two paths"
                        + " back to back");
        assertThat(text).containsPattern("(?m)^2 P +[0-9.]+ +[0-9.]+ +[0-9.]+ \\|");
        assertThat(text)
                .containsPattern("Java path SEND 2 B ping-pong right after ib_send_lat: p50 [0-9.]+ us, p99 [0-9.]+ us"
                        + " half round trip \\(\\d+ round trips\\); ib_send_lat typical [0-9.]+ us, 99% [0-9.]+ us");
        assertThat(text).containsPattern("target: perftest bandwidth >= 0.80x the Java path: [0-9.]+x");
        // Nothing of the full run: no Java-path bandwidth row against TCP, no floors.
        assertThat(text).doesNotContain("bandwidth, 1 stream", "floors:", "targets: bandwidth");
    }

    @Test
    void mediansAreTheMiddleValues() {
        assertThat(NativeBench.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(NativeBench.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(NativeBench.median(new double[] {0.4, 9})).isEqualTo(4.7);
        assertThat(NativeBench.median(new double[0])).isZero();
    }

    @Test
    void threadsAreSortedByKind() {
        assertThat(ThreadCpu.kind("C2 CompilerThre")).isEqualTo(ThreadCpu.JIT);
        assertThat(ThreadCpu.kind("C1 CompilerThre")).isEqualTo(ThreadCpu.JIT);
        assertThat(ThreadCpu.kind("GC Thread#0")).isEqualTo(ThreadCpu.GC);
        assertThat(ThreadCpu.kind("G1 Refine#0")).isEqualTo(ThreadCpu.GC);
        assertThat(ThreadCpu.kind("vrdma-doorbell-")).isEqualTo(ThreadCpu.CONTROL);
        assertThat(ThreadCpu.kind("ForkJoinPool-1-")).isEqualTo(ThreadCpu.CONTROL);
        assertThat(ThreadCpu.kind("vrdma-vrdma0-1-")).isEqualTo(ThreadCpu.LOOPS);
        assertThat(ThreadCpu.kind("vrdma-host-1-2")).isEqualTo(ThreadCpu.LOOPS);
        assertThat(ThreadCpu.kind("main")).isEqualTo(ThreadCpu.OTHER);
        // This JVM has run code: its threads' CPU is there, by kind.
        assertThat(java.util.Arrays.stream(ThreadCpu.byKind()).sum()).isPositive();
    }

    @Test
    void busyPollingCanBeTurnedOff() {
        assertThat(run("bench", "--duration", "0.05", "--size", "8192", "--busy-poll-us", "0", "--no-perftest"))
                .isZero();
        String text = out.toString();
        assertThat(text).contains("vRDMA busy polling (both loops): off (--busy-poll-us 0)");
        assertThat(text).containsPattern("latency p50, 64 B, half RTT \\[us\\] +[0-9.]+ +[0-9.]+ +[0-9.]+");
        assertThat(text).doesNotContain("perftest over the emulator");
    }

    @Test
    void latencyOnlyLeavesOutTheBandwidthRuns() {
        assertThat(run("bench", "--duration", "0.05", "--latency-only")).isZero();
        String text = out.toString();
        assertThat(text).containsPattern("latency p50, 64 B, half RTT \\[us\\] +[0-9.]+ +[0-9.]+ +[0-9.]+");
        assertThat(text).contains("floors: kernel UDP ping-pong", "vRDMA context switches");
        assertThat(text).containsPattern("targets: latency p50 <= 1.00x TCP: [0-9.]+x (met|NOT met)");
        assertThat(text).containsPattern("runs: vRDMA \\d+ round trips; TCP \\d+ round trips");
        assertThat(text).doesNotContain("bandwidth", "WRITE", "perftest over the emulator");
        // This machine's idle state, as CpuIdleState reads it, next to the TCP figures.
        CpuIdleState idle = CpuIdleState.current();
        assertThat(text).contains("idle CPUs: " + idle.describe() + "\n  so: " + idle.meaning() + "\n");
        assertThat(text.indexOf("idle CPUs: ")).isGreaterThan(text.indexOf("kernel TCP ping-pong polling"));
        assertThat(text).containsPattern("vRDMA warm-up: SEND ping-pong [0-9.]+ s");
    }

    /** A warm-up on a fake clock: each iteration takes 1 ms, the JIT compiles until {@code compilesUntilNs}. */
    private static BenchCommand.WarmUp fakeWarmUp(long plannedNs, long compilesUntilNs, boolean monitored) {
        long[] clock = {0};
        long[] iterations = {0};
        BenchCommand.WarmUp w = BenchCommand.warmUpUntilJitSettles(
                n -> {
                    clock[0] += n * 1_000_000L;
                    iterations[0] += n;
                },
                10,
                plannedNs,
                () -> clock[0],
                // Compile time grows with the clock while the JIT works, then stays.
                () -> monitored ? Math.min(clock[0], compilesUntilNs) / 1_000_000L : -1);
        assertThat(w.elapsedNs()).isEqualTo(clock[0]).isEqualTo(iterations[0] * 1_000_000L);
        assertThat(w.nsPerIteration()).isEqualTo(1_000_000.0);
        return w;
    }

    @Test
    void warmUpEndsOnTimeWhenTheJitIsQuiet() {
        BenchCommand.WarmUp w = fakeWarmUp(1_500_000_000L, 100_000_000L, true);
        assertThat(w.jitSettled()).isTrue();
        // The runs sized to the planned time were quiet for over 500 ms: nothing more.
        assertThat(w.elapsedNs()).isBetween(1_500_000_000L, 1_510_000_000L);
        assertThat(w.compileMs()).isEqualTo(100);
        assertThat(w.describe("SEND ping-pong", 1_500_000_000L)).isEqualTo("SEND ping-pong 1.5 s (JIT settled)");
    }

    @Test
    void warmUpGoesOnUntilTheJitHasBeenQuietForHalfASecond() {
        BenchCommand.WarmUp w = fakeWarmUp(1_500_000_000L, 3_000_000_000L, true);
        assertThat(w.jitSettled()).isTrue();
        // Compiling until 3 s, then two quiet 250 ms runs (the first begins in the last compiling one).
        assertThat(w.elapsedNs()).isGreaterThanOrEqualTo(3_500_000_000L).isLessThanOrEqualTo(3_760_000_000L);
        assertThat(w.compileMs()).isEqualTo(3_000);
        assertThat(w.describe("SEND ping-pong", 1_500_000_000L))
                .startsWith("SEND ping-pong 3.")
                .contains("past the planned 1.5 s until the JIT settled (JIT compile time during the warm-up 3000 ms)");
    }

    @Test
    void warmUpStopsAtTenTimesThePlannedTimeWhileTheJitStillCompiles() {
        BenchCommand.WarmUp w = fakeWarmUp(1_000_000_000L, Long.MAX_VALUE, true);
        assertThat(w.jitSettled()).isFalse();
        assertThat(w.elapsedNs()).isBetween(10_000_000_000L, 10_260_000_000L);
        assertThat(w.describe("WRITE", 1_000_000_000L)).contains("STILL COMPILING");
        // And at 20 s however long the planned warm-up.
        BenchCommand.WarmUp longer = fakeWarmUp(4_000_000_000L, Long.MAX_VALUE, true);
        assertThat(longer.elapsedNs()).isBetween(20_000_000_000L, 20_260_000_000L);
    }

    @Test
    void withoutJitMonitoringTheWarmUpIsTheTimedOne() {
        BenchCommand.WarmUp w = fakeWarmUp(1_000_000_000L, Long.MAX_VALUE, false);
        assertThat(w.jitSettled()).isTrue();
        assertThat(w.compileMs()).isEqualTo(-1);
        assertThat(w.elapsedNs()).isBetween(1_000_000_000L, 1_010_000_000L);
    }

    @Test
    void idleStateIsPrintedAsTwoLines() {
        StringWriter w = new StringWriter();
        PrintWriter p = new PrintWriter(w);
        BenchCommand.idleStateLines(p, new CpuIdleState("haltpoll", "haltpoll", 0, java.util.List.of("POLL (0 us)")));
        p.flush();
        assertThat(w.toString().split("\\R"))
                .containsExactly(
                        "idle CPUs: cpuidle driver haltpoll, governor haltpoll, guest_halt_poll_ns 0; cpu0 idle states"
                                + " (exit latency): POLL (0 us)",
                        "  so: halt polling is off: a thread blocked in a read leaves its vCPU halted, and each wake-up"
                                + " pays a VM exit and entry (tens of us per hop); the blocking TCP and UDP ping-pongs"
                                + " pay it on every hop, the busy-polling loops and the polling TCP ping-pong do not");
    }

    @Test
    void rejectsBadOptions() {
        assertThat(run("bench", "--duration", "0")).isEqualTo(2);
        assertThat(run("bench", "--size", "0")).isEqualTo(2);
        assertThat(run("bench", "--busy-poll-us", "-1")).isEqualTo(2);
        assertThat(run("bench", "--rounds", "0")).isEqualTo(2);
        assertThat(run("bench", "--perftest-only", "--no-perftest")).isEqualTo(2);
        assertThat(run("bench", "--perftest-only", "--latency-only")).isEqualTo(2);
        assertThat(err.toString()).contains("--duration", "--size", "--busy-poll-us", "--rounds", "--perftest-only");
    }

    @Test
    void helpListsBench() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("bench");
    }
}
