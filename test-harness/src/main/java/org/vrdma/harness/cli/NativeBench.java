package org.vrdma.harness.cli;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.vrdma.harness.perf.NativePerftestBench;
import org.vrdma.harness.perf.NativePerftestBench.WriteRun;
import org.vrdma.harness.perf.TcpBaseline;
import org.vrdma.harness.perf.ThreadCpu;

/**
 * The perftest part of {@code ./vrdma bench}: unmodified C programs over the native library, in
 * rounds interleaved with the Java path so that both see the same minutes of a shared machine.
 */
final class NativeBench {
    /** The bandwidth perftest must reach, as a fraction of the Java path's. */
    static final double TARGET = 0.80;

    /** A warm-up run whose compiler threads took less CPU than this ends the warm-up. */
    static final long JIT_QUIET_NS = 20_000_000;

    static final int WARM_UP_MAX_RUNS = 12;

    /**
     * {@code -Dvrdma.bench.shortWarmUp=true}: the warm-up before the JIT check (half the duration,
     * runs of half the rounds' size, rounds sized by the Java path's pace, no {@code ib_send_lat}
     * warm-up), for comparisons.
     */
    static final boolean SHORT_WARM_UP = Boolean.getBoolean("vrdma.bench.shortWarmUp");

    /** The warm-up stops after this many times {@code --duration}, quiet or not. */
    static final long WARM_UP_BUDGET_DURATIONS = 5;

    private NativeBench() {}

    /**
     * One Java-path WRITE run: bandwidth, and CPU per WRITE of both hosts' event loops (which run the
     * application too) and of this whole process; the transports' timeouts and retransmitted packets
     * over the run, and the share of the run each loop (A sender, B receiver) was on a core.
     */
    record JavaRun(
            double gbps,
            double loopsUs,
            double processUs,
            double[] threadsUs,
            long timeouts,
            long retransmitted,
            double[] loopBusy) {}

    /** Runs the Java path for a number of WRITEs. */
    interface JavaPath {
        JavaRun write(int writes);
    }

    /** One round: the Java path's run and perftest's, back to back. */
    record Round(JavaRun java, WriteRun perftest, boolean javaFirst) {}

    /** What the rounds measured, or why they did not run ({@code failure} not null). */
    record Comparison(
            int sizeBytes,
            int writes,
            List<Round> rounds,
            NativePerftestBench.SendLat sendLat,
            long perftestFixedCpuNs,
            double loadBefore,
            double loadAfter,
            long durationNs,
            int warmUpRuns,
            long warmUpLastJitNs,
            String failure) {

        static Comparison failed(String why) {
            return new Comparison(0, 0, List.of(), null, 0, 0, 0, 0, 0, 0, why);
        }

        double javaMedianGbps() {
            return median(rounds, r -> r.java().gbps());
        }

        double perftestMedianGbps() {
            return median(rounds, r -> r.perftest().gbps());
        }

        /** perftest's median bandwidth over the Java path's median. */
        double ratioOfMedians() {
            double j = javaMedianGbps();
            return j > 0 ? perftestMedianGbps() / j : 0;
        }
    }

    /**
     * Brings up two verbs hosts for perftest and runs {@code rounds} rounds, each a Java-path WRITE
     * run and an {@code ib_write_bw} run of the same number of WRITEs, which of the two goes first
     * alternating; then {@code ib_send_lat}.
     *
     * @param javaGbps the Java path's rate measured before, which sizes the runs: about {@code
     *     durationNs / rounds} each
     * @param spinNs the busy polling of the Java path's loops, which the perftest hosts get too
     */
    static Comparison compare(int sizeBytes, long durationNs, int rounds, long spinNs, double javaGbps, JavaPath java) {
        StringBuilder why = new StringBuilder();
        Path lib = NativePerftestBench.nativeLibrary(why);
        if (lib == null) {
            return Comparison.failed("not run: " + why);
        }
        double javaWritesPerSecond = Math.max(1000.0 * 65536 / sizeBytes, javaGbps * 1e9 / 8 / sizeBytes);
        // Each run about durationNs / rounds; never below 200 WRITEs, where perftest's own start-up
        // (a fixed cost, measured and subtracted) would dwarf the WRITEs' CPU.
        int writes = (int) Math.max(200, Math.min(200_000, durationNs / 1e9 / rounds * javaWritesPerSecond));
        int latencyIterations = (int) Math.max(200, Math.min(20_000, durationNs / 1e9 * 1000));
        try (NativePerftestBench bench = NativePerftestBench.start(lib, spinNs)) {
            // Runs of the rounds' size until the JIT is quiet (a run's compiler CPU below
            // JIT_QUIET_NS): every run also compiles control code (connection, registration, QP
            // set-up), and a warm-up of half the duration was one or two runs (each ~2 s of perftest
            // start-up), after which the compiler still took 160-330 ms of CPU in each of the first
            // rounds, on the same two cores; those rounds were the bad ones (0.24-0.76x against
            // 0.93-2.15x once it was quiet).
            long warmUpStartNs = System.nanoTime();
            long warmUpBudgetNs = WARM_UP_BUDGET_DURATIONS * durationNs;
            int warmUps = 0;
            long jitNs = 0;
            if (SHORT_WARM_UP) {
                for (int i = 0; i < 8 && (i == 0 || System.nanoTime() - warmUpStartNs < durationNs / 2); i++) {
                    bench.warmUp(sizeBytes, Math.max(200, writes / 2));
                    warmUps++;
                }
            } else {
                do {
                    long jit0 = ThreadCpu.byKind()[ThreadCpu.JIT];
                    double gbps = bench.warmUp(sizeBytes, Math.max(200, writes));
                    jitNs = ThreadCpu.byKind()[ThreadCpu.JIT] - jit0;
                    warmUps++;
                    // Rounds sized by the faster of the two paths' paces: the Java path's warm-up
                    // pace alone, on a loaded machine, made rounds of 1500-2000 WRITEs (40-100 ms of
                    // transfer) that a single burst of other work decided.
                    writes = (int)
                            Math.max(writes, Math.min(200_000, durationNs / 1e9 / rounds * gbps * 1e9 / 8 / sizeBytes));
                } while (warmUps < WARM_UP_MAX_RUNS
                        && (warmUps < 2 || jitNs > JIT_QUIET_NS)
                        && System.nanoTime() - warmUpStartNs < warmUpBudgetNs);
            }

            bench.measureFixedCost(sizeBytes);
            java.write(Math.max(200, writes / 2)); // the Java path's warm-up was long; this settles its pools
            double loadBefore = loadAverage();
            List<Round> done = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                boolean javaFirst = i % 2 == 0;
                JavaRun j = null;
                if (javaFirst) {
                    j = java.write(writes);
                }
                WriteRun p = bench.write(sizeBytes, writes);
                if (!javaFirst) {
                    j = java.write(writes);
                }
                done.add(new Round(j, p, javaFirst));
            }
            double loadAfter = loadAverage();
            // ib_send_lat's SEND/RECV paths are compiled before its measured run too; only after the
            // rounds: its first SENDs deoptimised code the WRITE path shares (branches never taken
            // by WRITEs), and the first round then paid 150-170 ms of recompilation.
            if (!SHORT_WARM_UP) {
                bench.sendLat(2, 1000);
            }
            NativePerftestBench.SendLat lat = bench.sendLat(2, latencyIterations);
            return new Comparison(
                    sizeBytes,
                    writes,
                    done,
                    lat,
                    bench.perftestFixedCpuNs(),
                    loadBefore,
                    loadAfter,
                    durationNs,
                    warmUps,
                    jitNs,
                    null);
        } catch (Exception e) {
            return Comparison.failed("FAILED: " + e.getMessage());
        }
    }

    static void print(PrintWriter out, Comparison c, double tcpGbps) {
        out.println();
        if (c.failure() != null) {
            out.println("perftest over the emulator: " + c.failure());
            out.flush();
            return;
        }
        TcpBaseline.Latency tcp2 = TcpBaseline.latency(2, 2_000, c.durationNs(), 5_000_000);
        List<Round> rounds = c.rounds();
        out.println("perftest over the emulator: unmodified ib_write_bw / ib_send_lat through the native"
                + " libibverbs.so.1, 2 verbs hosts in this process (UDP on 127.0.0.1)");
        out.printf(
                "perftest against the Java path: %d rounds of %d WRITEs of %d B each, the two paths back to back,"
                        + " which goes first alternating; load average %.2f before, %.2f after%n",
                rounds.size(), c.writes(), c.sizeBytes(), c.loadBefore(), c.loadAfter());
        if (SHORT_WARM_UP) {
            out.printf(
                    "perftest warm-up: %d ib_write_bw runs of half the rounds' size in half the duration"
                            + " (-Dvrdma.bench.shortWarmUp), no ib_send_lat warm-up%n",
                    c.warmUpRuns());
        } else {
            out.printf(
                    "perftest warm-up: %d ib_write_bw runs of the rounds' size, the last with %.0f ms of JIT compiler"
                            + " CPU (until below %d ms); ib_send_lat: one run of 1000 iterations before the measured"
                            + " one%n",
                    c.warmUpRuns(), c.warmUpLastJitNs() / 1e6, JIT_QUIET_NS / 1_000_000);
        }
        out.printf(
                "%-6s %10s %10s %8s | %-24s | %-34s%n",
                "round", "Java", "perftest", "ratio", "Java CPU/WRITE [us]", "perftest CPU/WRITE [us]");
        out.printf(
                "%-6s %10s %10s %8s | %11s %12s | %11s %11s %10s%n",
                "", "[Gbit/s]", "[Gbit/s]", "", "loops", "process", "loops", "vNIC proc.", "perftest");
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            roundLine(
                    out,
                    (i + 1) + (r.javaFirst() ? " J" : " P"),
                    r.java().gbps(),
                    r.perftest().gbps(),
                    r.java().gbps() > 0 ? r.perftest().gbps() / r.java().gbps() : 0,
                    r.java().loopsUs(),
                    r.java().processUs(),
                    r.perftest().cpu().loopsUs(),
                    r.perftest().cpu().vnicProcessUs(),
                    r.perftest().cpu().perftestUs());
        }
        double javaGbps = c.javaMedianGbps();
        double perftestGbps = c.perftestMedianGbps();
        double javaLoops = median(rounds, r -> r.java().loopsUs());
        double javaProcess = median(rounds, r -> r.java().processUs());
        double pLoops = median(rounds, r -> r.perftest().cpu().loopsUs());
        double pProcess = median(rounds, r -> r.perftest().cpu().vnicProcessUs());
        double pApp = median(rounds, r -> r.perftest().cpu().perftestUs());
        double[] ratios = rounds.stream()
                .mapToDouble(r -> r.perftest().gbps() / r.java().gbps())
                .toArray();
        roundLine(
                out, "median", javaGbps, perftestGbps, median(ratios), javaLoops, javaProcess, pLoops, pProcess, pApp);
        out.printf(
                "(J: the Java path ran first in the round, P: perftest; perftest's CPU leaves out its fixed %.0f ms"
                        + " of start-up per run; Java's application runs on the loops)%n",
                c.perftestFixedCpuNs() / 1e6);
        out.println("per round: retransmission timeouts / packets retransmitted, each event loop's CPU over the"
                + " WRITEs' time (bytes / bandwidth; Java: A sender, B receiver; perftest: A responder, B requester),"
                + " the JIT compiler threads' CPU over each path's run (ms), perftest's doorbells and futex wake-ups per"
                + " WRITE,"
                + " perftest's run wall time (start-up included)");
        out.println("ib_write_bw settings: " + settings(rounds.get(0).perftest().output()));
        out.printf(
                "%-6s %9s %9s %7s %7s %7s | %9s %9s %7s %7s %7s %9s %9s %9s%n",
                "round",
                "J t/o",
                "J resent",
                "J A%",
                "J B%",
                "J JIT",
                "P t/o",
                "P resent",
                "P A%",
                "P B%",
                "P JIT",
                "doorbells",
                "wakes",
                "run [ms]");
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            NativePerftestBench.WriteCpu p = r.perftest().cpu();
            out.printf(
                    "%-6s %9d %9d %7.0f %7.0f %7.0f | %9d %9d %7.0f %7.0f %7.0f %9.3f %9.3f %9.0f%n",
                    (i + 1) + (r.javaFirst() ? " J" : " P"),
                    r.java().timeouts(),
                    r.java().retransmitted(),
                    100 * r.java().loopBusy()[0],
                    100 * r.java().loopBusy()[1],
                    r.java().threadsUs()[ThreadCpu.JIT] * c.writes() / 1e3,
                    p.timeouts(),
                    p.retransmitted(),
                    100 * p.loopBusy()[0],
                    100 * p.loopBusy()[1],
                    p.threadsUs()[ThreadCpu.JIT] * c.writes() / 1e3,
                    p.doorbellsPerWrite(),
                    p.futexWakesPerWrite(),
                    p.runNs() / 1e6);
        }
        out.println();
        out.printf(
                "%-44s %14s %14s %14s %12s %12s%n",
                "workload", "perftest", "vRDMA (Java)", "kernel TCP", "perftest/Java", "perftest/TCP");
        out.printf(
                "%-44s %14.2f %14.2f %14.2f %12.2f %12.2f%n",
                "ib_write_bw, " + c.sizeBytes() + " B, median [Gbit/s]",
                perftestGbps,
                javaGbps,
                tcpGbps,
                c.ratioOfMedians(),
                tcpGbps > 0 ? perftestGbps / tcpGbps : 0);
        double tcpUs = tcp2.p50Ns() / 1e3;
        out.printf(
                "%-44s %14.2f %14s %14.2f %12s %12.2f%n",
                "ib_send_lat, 2 B, typical one-way [us]",
                c.sendLat().typicalUs(),
                "-",
                tcpUs,
                "-",
                tcpUs > 0 ? c.sendLat().typicalUs() / tcpUs : 0);
        out.printf("%-44s %14.2f%n", "ib_send_lat, 2 B, 99% [us]", c.sendLat().p99Us());
        out.printf("ib_send_lat per round trip: %.2f doorbells%n", c.sendLat().doorbellsPerRoundTrip());
        double doorbells = mean(rounds, r -> r.perftest().cpu().doorbellsPerWrite());
        double futexWakes = mean(rounds, r -> r.perftest().cpu().futexWakesPerWrite());
        out.printf(
                "ib_write_bw CPU per %d B WRITE (user+system, medians): %.1f us both hosts' event loops, %.1f us the"
                        + " whole vNIC process, %.1f us the two perftest processes; %.2f doorbells, %.2f futex wake-ups"
                        + " per WRITE%n",
                c.sizeBytes(), pLoops, pProcess, pApp, doorbells, futexWakes);
        out.printf(
                "ib_write_bw event-loop CPU per WRITE against the Java path's: %.1f us against %.1f us (%.2fx)%n",
                pLoops, javaLoops, javaLoops > 0 ? pLoops / javaLoops : 0);
        double pTotal = pProcess + pApp;
        out.printf(
                "CPU per WRITE of everything each path runs (Java: this process; perftest: this process and the two"
                        + " perftest processes): %.1f us against %.1f us (%.2fx)%n",
                pTotal, javaProcess, javaProcess > 0 ? pTotal / javaProcess : 0);
        out.printf(
                "this process's CPU per WRITE by threads (medians, us): Java path %s; perftest %s%n",
                threads(rounds, r -> r.java().threadsUs()),
                threads(rounds, r -> r.perftest().cpu().threadsUs()));
        double[] u = new double[rounds.get(0).perftest().cpu().underlay().length];
        for (Round r : rounds) {
            for (int i = 0; i < u.length; i++) {
                u[i] += r.perftest().cpu().underlay()[i] / rounds.size();
            }
        }
        out.printf(
                "ib_write_bw underlay (both hosts) per WRITE: %.1f datagrams (%.1f ACKs) (%.1f with the payload sent from"
                        + " the memory region), %.2f GSO sends, %.2f flushes, %.2f read bursts, %.2f recvmmsg calls;"
                        + " %d packets retransmitted after %d timeouts; %.1f B of heap allocated by the event loops%n",
                u[0],
                mean(rounds, r -> r.perftest().cpu().acksPerWrite()),
                u[6],
                u[1],
                u[2],
                u[4],
                u[5],
                rounds.stream()
                        .mapToLong(r -> r.perftest().cpu().retransmitted())
                        .sum(),
                rounds.stream().mapToLong(r -> r.perftest().cpu().timeouts()).sum(),
                mean(rounds, r -> r.perftest().cpu().loopAllocatedBytes()));
        out.printf(
                "ib_write_bw registered memory: %d regions zero-copy, %d through process_vm_readv/writev"
                        + " (%d memfds refused), %d process_vm calls%n",
                rounds.stream()
                        .mapToLong(r -> r.perftest().memory().zeroCopyRegions())
                        .sum(),
                rounds.stream()
                        .mapToLong(r -> r.perftest().memory().copyRegions())
                        .sum(),
                rounds.stream()
                        .mapToLong(r -> r.perftest().memory().refusedMemfds())
                        .sum(),
                rounds.stream()
                        .mapToLong(r -> r.perftest().memory().copyCalls())
                        .sum());
        double ratio = c.ratioOfMedians();
        out.printf(
                "target: perftest bandwidth >= %.2fx the Java path: %.2fx (median over median of %d interleaved"
                        + " rounds; per round %.2f-%.2fx) %s%n",
                TARGET,
                ratio,
                rounds.size(),
                Arrays.stream(ratios).min().orElse(0),
                Arrays.stream(ratios).max().orElse(0),
                ratio >= TARGET ? "met" : "NOT met");
        out.flush();
    }

    private static void roundLine(
            PrintWriter out,
            String label,
            double javaGbps,
            double perftestGbps,
            double ratio,
            double javaLoops,
            double javaProcess,
            double pLoops,
            double pProcess,
            double pApp) {
        out.printf(
                "%-6s %10.2f %10.2f %8.2f | %11.1f %12.1f | %11.1f %11.1f %10.1f%n",
                label, javaGbps, perftestGbps, ratio, javaLoops, javaProcess, pLoops, pProcess, pApp);
    }

    /** perftest's TX depth and CQ moderation lines, as it printed them. */
    private static String settings(String output) {
        StringBuilder b = new StringBuilder();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(TX depth|CQ Moderation)\\s*:\\s*(\\d+)")
                .matcher(output);
        while (m.find()) {
            b.append(b.isEmpty() ? "" : ", ").append(m.group(1)).append(' ').append(m.group(2));
        }
        return b.toString();
    }

    private static String threads(List<Round> rounds, java.util.function.Function<Round, double[]> f) {
        String[] names = {"loops", "JIT", "GC", "control and doorbells", "other"};
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < ThreadCpu.KINDS; k++) {
            int kind = k;
            b.append(k == 0 ? "" : ", ")
                    .append(names[k])
                    .append(' ')
                    .append(String.format(java.util.Locale.ROOT, "%.1f", median(rounds, r -> f.apply(r)[kind])));
        }
        return b.toString();
    }

    static double median(List<Round> rounds, ToDoubleFunction<Round> f) {
        return median(rounds.stream().mapToDouble(f).toArray());
    }

    /** The median; the mean of the middle two for an even count, 0 for none. */
    static double median(double[] values) {
        if (values.length == 0) {
            return 0;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int m = v.length / 2;
        return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
    }

    private static double mean(List<Round> rounds, ToDoubleFunction<Round> f) {
        return rounds.stream().mapToDouble(f).average().orElse(0);
    }

    private static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
