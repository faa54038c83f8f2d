package org.vrdma.harness.cli;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.vrdma.harness.perf.CpuIdleState;
import org.vrdma.harness.perf.PerftestSuite;
import org.vrdma.harness.perf.PerftestSuite.BandwidthRow;
import org.vrdma.harness.perf.PerftestSuite.LatencyRow;
import org.vrdma.harness.perf.RealTimeProfile;
import org.vrdma.harness.perf.RealTimeTwoHostLab;
import org.vrdma.harness.perf.TcpBaseline;
import org.vrdma.harness.perf.ThreadCpu;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.WrOpcode;
import org.vrdma.vswitch.udp.NettyUnderlay;
import org.vrdma.vswitch.udp.VSwitchHost;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * vRDMA against kernel TCP in one run on this machine: RDMA WRITE bandwidth (one RC QP) and SEND
 * latency over the real-time two-host lab, then the same two workloads over a TCP socket pair on
 * 127.0.0.1, and the ratios. Absolute figures vary between machines; the ratios are what compare.
 */
@Command(
        name = "bench",
        description = "Benchmark vRDMA (WRITE bandwidth, SEND latency) against kernel TCP on 127.0.0.1 in one run.")
final class BenchCommand implements Callable<Integer> {
    private static final int BUFFER_BYTES = 2 << 20;
    private static final long MAX_LATENCY_ITERATIONS = 5_000_000;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--duration",
            defaultValue = "8",
            description =
                    "Seconds measured per workload (four workloads, each after a warm-up of half that); default ${DEFAULT-VALUE}.")
    double durationSeconds;

    @Option(
            names = "--size",
            defaultValue = "65536",
            description = "Bytes per RDMA WRITE and per TCP write in the bandwidth runs; default ${DEFAULT-VALUE}.")
    int sizeBytes;

    @Option(
            names = "--latency-size",
            defaultValue = "64",
            description = "Bytes per message in the latency runs; default ${DEFAULT-VALUE}.")
    int latencySizeBytes;

    @Option(
            names = "--tx-depth",
            defaultValue = "64",
            description = "RDMA WRITEs outstanding in the bandwidth run; default ${DEFAULT-VALUE}.")
    int txDepth;

    @Option(
            names = "--window",
            defaultValue = "0",
            description = "TX window per QP in bytes, 0 for the real-time profile's (1 MiB: sixteen ACK intervals);"
                    + " default ${DEFAULT-VALUE}.")
    long windowBytes;

    @Option(
            names = "--no-perftest",
            description = "Leave out Debian's unmodified ib_write_bw and ib_send_lat (2 B) over the emulator through"
                    + " the native libibverbs.so.1, which otherwise run next to the same-run figures.")
    boolean noPerftest;

    @Option(
            names = "--rounds",
            defaultValue = "5",
            description = "Rounds of the perftest comparison: each an ib_write_bw run and a Java-path run of the same"
                    + " WRITEs back to back, which goes first alternating; the verdict compares the medians;"
                    + " default ${DEFAULT-VALUE}.")
    int rounds;

    @Option(
            names = "--busy-poll-us",
            defaultValue = "100",
            description = "Microseconds each host's event loop keeps polling its socket after its last event before it"
                    + " sleeps, as RDMA applications poll their CQs; a loop that loses its core while polling sleeps"
                    + " instead for a while (0: sleep at once); default ${DEFAULT-VALUE}.")
    long busyPollUs;

    @Option(
            names = "--latency-only",
            description = "Run the latency workloads only (vRDMA SEND, kernel TCP and the kernel UDP floor), without"
                    + " the bandwidth runs and perftest.")
    boolean latencyOnly;

    @Option(
            names = "--perftest-only",
            description = "Run only the perftest comparison (ib_write_bw against the Java path in --rounds"
                    + " interleaved rounds, then ib_send_lat), after the Java path's warm-up; no kernel TCP runs"
                    + " besides the 2 B latency reference.")
    boolean perftestOnly;

    @Option(
            names = "--leak-detection",
            description = "Keep Netty's buffer leak detection at its level (default: off for the measurement;"
                    + " the tests run it at paranoid).")
    boolean leakDetection;

    @Override
    public Integer call() throws Exception {
        if (!(durationSeconds > 0 && durationSeconds <= 600)) {
            throw new ParameterException(spec.commandLine(), "--duration must be in (0, 600] seconds");
        }
        if (sizeBytes < 1 || sizeBytes > BUFFER_BYTES / 2 || latencySizeBytes < 1 || latencySizeBytes > 4096) {
            throw new ParameterException(
                    spec.commandLine(), "--size must be 1.." + BUFFER_BYTES / 2 + ", --latency-size 1..4096");
        }
        if (txDepth < 1 || txDepth > 1024) {
            throw new ParameterException(spec.commandLine(), "--tx-depth must be 1..1024");
        }
        if (windowBytes < 0) {
            throw new ParameterException(spec.commandLine(), "--window must be >= 0");
        }
        if (rounds < 1 || rounds > 50) {
            throw new ParameterException(spec.commandLine(), "--rounds must be 1..50");
        }
        if (busyPollUs < 0 || busyPollUs > 1_000_000) {
            throw new ParameterException(spec.commandLine(), "--busy-poll-us must be 0..1000000");
        }
        if (perftestOnly && (noPerftest || latencyOnly)) {
            throw new ParameterException(
                    spec.commandLine(), "--perftest-only excludes --no-perftest and --latency-only");
        }
        PrintWriter out = spec.commandLine().getOut();
        if (!leakDetection) {
            // Netty's default sampling records a stack trace for one buffer in 128 (a few per WRITE).
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        long durationNs = (long) (durationSeconds * 1e9);
        long warmupNs = Math.max(durationNs / 2, 1_000_000);

        if (perftestOnly) {
            return perftestOnly(out, durationNs, warmupNs);
        }
        long rcvbufErrorsBefore = udpRcvbufErrors();
        BandwidthRow rdmaBw;
        LatencyRow rdmaLat;
        TransportCounters counters;
        String labLine;
        String transport;
        String underlayLine;
        String busyPollLine;
        String warmUpLine;
        String switchesLine;
        double allocPerWrite;
        double allocPerRoundTrip;
        double cpuPerWriteUs;
        double cpuPerRoundTripUs;
        String cpuSplit;
        NativeBench.Comparison perftest = null;
        try (RealTimeTwoHostLab lab = new RealTimeTwoHostLab(transportConfig(), BUFFER_BYTES, busyPollUs * 1000)) {
            labLine = lab.describe();
            transport = lab.runtime() + ", GSO " + onOff(lab.hostA().gsoActive()) + ", GRO "
                    + onOff(lab.hostA().groActive()) + ", ICRC checked on receive "
                    + onOff(RealTimeProfile.verifiesReceivedIcrc());
            out.println("vrdma bench: " + labLine);
            out.println("RC, MTU 4096, selective repeat, tx depth " + txDepth + ", window "
                    + transportConfig().effectiveWindowBytes() + " B");
            out.flush();
            PerftestSuite suite = new PerftestSuite(
                    lab, RecoveryMode.SELECTIVE_REPEAT, txDepth, Math.max(60_000_000_000L, 4 * durationNs));
            // Warm-up (JIT, pools, socket buffers); its pace sizes the measured runs.
            // Until the JIT has compiled the path, however busy the machine (bounded).
            WarmUp bwWarmUp = latencyOnly
                    ? null
                    : warmUpUntilJitSettles(
                            n -> suite.bandwidth(WrOpcode.RDMA_WRITE, sizeBytes, n),
                            16,
                            warmupNs,
                            System::nanoTime,
                            BenchCommand::jitCompileMs);
            double nsPerWrite = latencyOnly ? 0 : bwWarmUp.nsPerIteration();
            WarmUp latWarmUp = warmUpUntilJitSettles(
                    n -> suite.latency(latencySizeBytes, n),
                    100,
                    warmupNs,
                    System::nanoTime,
                    BenchCommand::jitCompileMs);
            double nsPerRoundTrip = latWarmUp.nsPerIteration();
            warmUpLine = (bwWarmUp == null ? "" : bwWarmUp.describe("WRITE", warmupNs) + "; ")
                    + latWarmUp.describe("SEND ping-pong", warmupNs);
            TransportCounters before = lab.transportCounters();
            long cpuA0 = loopCpuNs(lab, true);
            long cpuB0 = loopCpuNs(lab, false);
            long waitA0 = loopRunQueueNs(lab, true);
            long waitB0 = loopRunQueueNs(lab, false);
            long cpu0 = cpuA0 + cpuB0;
            long wall0 = System.nanoTime();
            long alloc0 = loopAllocatedBytes(lab);
            long[] u0 = underlayCounters(lab);
            rdmaBw = latencyOnly
                    ? new BandwidthRow(WrOpcode.RDMA_WRITE, sizeBytes, 0, 0, 0, true)
                    : measureBandwidth(suite, nsPerWrite, durationNs);
            long wallNs = System.nanoTime() - wall0;
            long cpuA1 = loopCpuNs(lab, true);
            long cpuB1 = loopCpuNs(lab, false);
            long waitA1 = loopRunQueueNs(lab, true);
            long waitB1 = loopRunQueueNs(lab, false);
            long cpu1 = cpuA1 + cpuB1;
            long alloc1 = loopAllocatedBytes(lab);
            long[] u1 = underlayCounters(lab);
            long[] bp1 = lab.busyPollCounters();
            TransportCounters afterBw = lab.transportCounters();
            long[] cs1 = loopContextSwitches(lab);
            long latWall0 = System.nanoTime();
            rdmaLat = suite.latency(latencySizeBytes, clamp(durationNs / nsPerRoundTrip, 50, MAX_LATENCY_ITERATIONS));
            long latWallNs = System.nanoTime() - latWall0;
            long[] cs2 = loopContextSwitches(lab);
            long cpu2 = loopCpuNs(lab, true) + loopCpuNs(lab, false);
            long alloc2 = loopAllocatedBytes(lab);
            long[] u2 = underlayCounters(lab);
            long[] bp2 = lab.busyPollCounters();
            busyPollLine = busyPollUs == 0
                    ? "off (--busy-poll-us 0)"
                    : busyPollUs + " us per loop; per round trip "
                            + busyPoll(bp1, bp2, rdmaLat.iterations(), latWallNs);
            switchesLine = cs1[0] < 0
                    ? "n/a"
                    : String.format(
                            "%.2f voluntary (sleeps), %.2f involuntary (preemptions)",
                            (cs2[0] - cs1[0]) / (double) Math.max(1, rdmaLat.iterations()),
                            (cs2[1] - cs1[1]) / (double) Math.max(1, rdmaLat.iterations()));
            allocPerWrite = (alloc1 - alloc0) / (double) Math.max(1, rdmaBw.iterations());
            allocPerRoundTrip = (alloc2 - alloc1) / (double) Math.max(1, rdmaLat.iterations());
            underlayLine = (latencyOnly
                            ? ""
                            : perOp("per WRITE", u0, u1, rdmaBw.iterations(), afterBw.txAcks - before.txAcks) + "; ")
                    + perOp("per round trip", u1, u2, rdmaLat.iterations(), -1);
            cpuPerWriteUs = (cpu1 - cpu0) / 1e3 / Math.max(1, rdmaBw.iterations());
            cpuPerRoundTripUs = (cpu2 - cpu1) / 1e3 / Math.max(1, rdmaLat.iterations());
            long writes = Math.max(1, rdmaBw.iterations());
            cpuSplit = String.format(
                    "sender's loop %.1f us (of the run: ran %s), receiver's %.1f us (ran %s)",
                    (cpuA1 - cpuA0) / 1e3 / writes,
                    shares(cpuA1 - cpuA0, waitA1 - waitA0, waitA0 < 0, wallNs),
                    (cpuB1 - cpuB0) / 1e3 / writes,
                    shares(cpuB1 - cpuB0, waitB1 - waitB0, waitB0 < 0, wallNs));
            counters = minus(lab.transportCounters(), before);
            if (!noPerftest && !latencyOnly) {
                // Rounds of the native path interleaved with the Java path's, on this lab while it is warm.
                perftest = NativeBench.compare(
                        sizeBytes, durationNs, rounds, busyPollUs * 1000, rdmaBw.gbps(), n -> javaRun(lab, suite, n));
            }
        }
        long rcvbufErrors = udpRcvbufErrors() - rcvbufErrorsBefore;

        TcpBaseline.Bandwidth tcpBw = new TcpBaseline.Bandwidth(0, 0, 0, 0);
        if (!latencyOnly) {
            TcpBaseline.bandwidth(sizeBytes, warmupNs);
            tcpBw = TcpBaseline.bandwidth(sizeBytes, durationNs);
        }
        TcpBaseline.Latency tcpLat = TcpBaseline.latency(latencySizeBytes, 2_000, durationNs, MAX_LATENCY_ITERATIONS);
        TcpBaseline.Latency udpLat =
                TcpBaseline.udpLatency(latencySizeBytes, 2_000, durationNs / 2, MAX_LATENCY_ITERATIONS, false);
        TcpBaseline.Latency udpEpollLat =
                TcpBaseline.udpLatency(latencySizeBytes, 2_000, durationNs / 2, MAX_LATENCY_ITERATIONS, true);
        TcpBaseline.Latency tcpPollLat =
                TcpBaseline.latency(latencySizeBytes, 2_000, durationNs / 2, MAX_LATENCY_ITERATIONS, true);

        out.println();
        out.println("machine: " + machine(transport));
        out.println();
        out.printf("%-44s %14s %14s %12s%n", "workload", "vRDMA", "kernel TCP", "vRDMA/TCP");
        if (!latencyOnly) {
            out.printf(
                    "%-44s %14.2f %14.2f %12.2f%n",
                    "bandwidth, 1 stream, " + sizeBytes + " B messages [Gbit/s]",
                    rdmaBw.gbps(),
                    tcpBw.gbps(),
                    ratio(rdmaBw.gbps(), tcpBw.gbps()));
        }
        latencyLine(out, "latency p50, " + latencySizeBytes + " B, half RTT [us]", rdmaLat.p50Ns(), tcpLat.p50Ns());
        latencyLine(out, "latency p99 [us]", rdmaLat.p99Ns(), tcpLat.p99Ns());
        latencyLine(out, "latency p99.9 [us]", rdmaLat.p999Ns(), tcpLat.p999Ns());
        out.println();
        out.printf(
                "floors: kernel UDP ping-pong, %d B, one datagram per hop, Java sockets: blocking reads p50 %.2f us"
                        + " (p99 %.2f, %d round trips); through epoll as an event loop (epoll_wait, read, write per"
                        + " hop) p50 %.2f us (p99 %.2f, %d round trips); vRDMA/epoll floor p50 %.2fx, TCP/epoll"
                        + " floor %.2fx%n",
                latencySizeBytes,
                udpLat.p50Ns() / 1e3,
                udpLat.p99Ns() / 1e3,
                udpLat.iterations(),
                udpEpollLat.p50Ns() / 1e3,
                udpEpollLat.p99Ns() / 1e3,
                udpEpollLat.iterations(),
                ratio(rdmaLat.p50Ns(), udpEpollLat.p50Ns()),
                ratio(tcpLat.p50Ns(), udpEpollLat.p50Ns()));
        // The table's TCP blocks in its reads while the loops poll (and back off): the same ping-pong
        // with polling ends too, so neither side is compared only in the shape that suits it.
        out.printf(
                "kernel TCP ping-pong polling as the loops do (non-blocking reads, a yield after each empty read,"
                        + " no back-off; the table's TCP blocks in its reads): p50 %.2f us (p99 %.2f, %d round trips);"
                        + " vRDMA/polling TCP p50 %.2fx%n",
                tcpPollLat.p50Ns() / 1e3,
                tcpPollLat.p99Ns() / 1e3,
                tcpPollLat.iterations(),
                ratio(rdmaLat.p50Ns(), tcpPollLat.p50Ns()));
        // The blocking baselines pay the CPU's wake-up on every hop, the polling loops do not: what it
        // costs here depends on how idle CPUs wait (read only, never changed by the bench).
        idleStateLines(out, CpuIdleState.current());
        if (latencyOnly) {
            out.printf("runs: vRDMA %d round trips; TCP %d round trips%n", rdmaLat.iterations(), tcpLat.iterations());
        } else {
            out.printf(
                    "runs: vRDMA %d WRITEs (%s), %d round trips; TCP %d MB streamed, %d round trips%n",
                    rdmaBw.iterations(),
                    rdmaBw.intact() ? "data intact" : "DATA CORRUPT",
                    rdmaLat.iterations(),
                    tcpBw.bytes() >> 20,
                    tcpLat.iterations());
        }
        out.printf(
                "vRDMA transport: tx %d pkts, retransmitted %d, timeouts %d, tail-loss probes %d, NAK seq %d,"
                        + " duplicates %d; UDP receive-buffer errors (host-wide) %s%n",
                counters.txPackets,
                counters.retransmittedPackets,
                counters.timeouts,
                counters.tailProbes,
                counters.seqNaksSent,
                counters.duplicateRequests,
                rcvbufErrors < 0 ? "n/a" : Long.toString(rcvbufErrors));
        if (latencyOnly) {
            out.printf("vRDMA CPU (both hosts' event loops, user+system): %.1f us per round trip%n", cpuPerRoundTripUs);
        } else {
            out.printf(
                    "vRDMA CPU (both hosts' event loops, user+system): %.1f us per %d B WRITE (%s), %.1f us per round"
                            + " trip%n",
                    cpuPerWriteUs, sizeBytes, cpuSplit, cpuPerRoundTripUs);
            double tcpCpuUs = tcpBw.cpuUsPer(sizeBytes);
            if (!Double.isNaN(tcpCpuUs)) {
                // Each side gets about the same share of a busy machine's cores, so what an operation
                // costs in CPU predicts the bandwidth ratio better than one run's rates do.
                out.printf(
                        "kernel TCP CPU (writer + reader threads, user+system): %.1f us per %d B (writer %.1f us, reader"
                                + " %.1f us); TCP CPU / vRDMA CPU per %d B: %.2f%n",
                        tcpCpuUs,
                        sizeBytes,
                        tcpBw.writerCpuNs() / 1e3 * sizeBytes / Math.max(1, tcpBw.bytes()),
                        tcpBw.readerCpuNs() / 1e3 * sizeBytes / Math.max(1, tcpBw.bytes()),
                        sizeBytes,
                        ratio(tcpCpuUs, cpuPerWriteUs));
            }
        }
        out.println("vRDMA underlay (both hosts): " + underlayLine);
        out.println("vRDMA busy polling (both loops): " + busyPollLine);
        out.println("vRDMA warm-up: " + warmUpLine);
        out.println("vRDMA context switches of both event loops per round trip: " + switchesLine);
        out.printf(
                "vRDMA heap allocation (both hosts' event loops): %s%.1f B per round trip%n",
                latencyOnly ? "" : String.format("%.1f B per WRITE, ", allocPerWrite), allocPerRoundTrip);
        double bwRatio = ratio(rdmaBw.gbps(), tcpBw.gbps());
        double latRatio = ratio(rdmaLat.p50Ns(), tcpLat.p50Ns());
        out.printf(
                "targets: %slatency p50 <= 1.00x TCP: %.2fx %s%n",
                latencyOnly
                        ? ""
                        : String.format(
                                "bandwidth >= 2.00x TCP: %.2fx %s; ", bwRatio, bwRatio >= 2 ? "met" : "NOT met"),
                latRatio,
                latRatio <= 1 ? "met" : "NOT met");
        out.flush();
        if (perftest != null) {
            NativeBench.print(out, perftest, tcpBw.gbps());
        }
        return rdmaBw.intact() ? 0 : 1;
    }

    /**
     * The perftest comparison alone: the Java path warmed up as in the full run (its pace sizes the
     * rounds), then {@link NativeBench#compare}.
     */
    private int perftestOnly(PrintWriter out, long durationNs, long warmupNs) throws Exception {
        NativeBench.Comparison perftest;
        LatencyRow javaLat;
        String transport;
        try (RealTimeTwoHostLab lab = new RealTimeTwoHostLab(transportConfig(), BUFFER_BYTES, busyPollUs * 1000)) {
            transport = lab.runtime() + ", GSO " + onOff(lab.hostA().gsoActive()) + ", GRO "
                    + onOff(lab.hostA().groActive());
            out.println("vrdma bench --perftest-only: " + lab.describe());
            out.flush();
            PerftestSuite suite = new PerftestSuite(
                    lab, RecoveryMode.SELECTIVE_REPEAT, txDepth, Math.max(60_000_000_000L, 4 * durationNs));
            double nsPerWrite = warmUp(n -> suite.bandwidth(WrOpcode.RDMA_WRITE, sizeBytes, n), 16, warmupNs);
            double javaGbps = sizeBytes * 8 / nsPerWrite;
            perftest = NativeBench.compare(
                    sizeBytes, durationNs, rounds, busyPollUs * 1000, javaGbps, n -> javaRun(lab, suite, n));
            // The Java path's SEND ping-pong of ib_send_lat's size, right after it, on the warm lab.
            double nsPerRoundTrip = warmUp(n -> suite.latency(2, n), 100, warmupNs / 2);
            javaLat = suite.latency(2, clamp(durationNs / 2 / nsPerRoundTrip, 50, MAX_LATENCY_ITERATIONS));
        }
        out.println();
        out.println("machine: " + machine(transport));
        idleStateLines(out, CpuIdleState.current());
        NativeBench.print(out, perftest, 0);
        out.printf(
                "Java path SEND 2 B ping-pong right after ib_send_lat: p50 %.2f us, p99 %.2f us half round trip"
                        + " (%d round trips); ib_send_lat typical %.2f us, 99%% %.2f us%n",
                javaLat.p50Ns() / 1e3,
                javaLat.p99Ns() / 1e3,
                javaLat.iterations(),
                perftest.sendLat() == null ? Double.NaN : perftest.sendLat().typicalUs(),
                perftest.sendLat() == null ? Double.NaN : perftest.sendLat().p99Us());
        out.flush();
        return perftest.failure() == null ? 0 : 1;
    }

    /**
     * Voluntary and involuntary context switches of both hosts' event-loop threads so far, from
     * {@code /proc/thread-self/status}; {-1, -1} where there is none.
     */
    private static long[] loopContextSwitches(RealTimeTwoHostLab lab) {
        java.util.function.Supplier<long[]> own = BenchCommand::threadContextSwitches;
        long[] a = lab.onA(own);
        long[] b = lab.onB(own);
        return a[0] < 0 || b[0] < 0 ? new long[] {-1, -1} : new long[] {a[0] + b[0], a[1] + b[1]};
    }

    /** The calling thread's voluntary and involuntary context switches, {-1, -1} where unknown. */
    static long[] threadContextSwitches() {
        long voluntary = -1;
        long involuntary = -1;
        try {
            for (String l : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
                if (l.startsWith("voluntary_ctxt_switches:")) {
                    voluntary = Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                } else if (l.startsWith("nonvoluntary_ctxt_switches:")) {
                    involuntary = Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return voluntary < 0 || involuntary < 0 ? new long[] {-1, -1} : new long[] {voluntary, involuntary};
    }

    /** One WRITE run of the Java path with its CPU per WRITE: both loops, and this whole process. */
    private NativeBench.JavaRun javaRun(RealTimeTwoHostLab lab, PerftestSuite suite, int writes) {
        long loopA0 = loopCpuNs(lab, true);
        long loopB0 = loopCpuNs(lab, false);
        long loops0 = loopA0 + loopB0;
        long process0 = processCpuNs();
        long[] threads0 = ThreadCpu.byKind();
        TransportCounters t0 = lab.transportCounters();
        BandwidthRow r = suite.bandwidth(WrOpcode.RDMA_WRITE, sizeBytes, writes);
        TransportCounters t1 = lab.transportCounters();
        long[] threads1 = ThreadCpu.byKind();
        if (!r.intact()) {
            throw new IllegalStateException("Java path: DATA CORRUPT");
        }
        double n = Math.max(1, r.iterations());
        double transferNs = r.gbps() > 0 ? n * sizeBytes * 8 / r.gbps() : 1;
        double[] threads = new double[threads0.length];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = (threads1[i] - threads0[i]) / n / 1e3;
        }
        return new NativeBench.JavaRun(
                r.gbps(),
                (loopCpuNs(lab, true) + loopCpuNs(lab, false) - loops0) / n / 1e3,
                (processCpuNs() - process0) / n / 1e3,
                threads,
                t1.timeouts - t0.timeouts,
                t1.retransmittedPackets - t0.retransmittedPackets,
                new double[] {
                    (loopCpuNs(lab, true) - loopA0) / transferNs, (loopCpuNs(lab, false) - loopB0) / transferNs
                });
    }

    /** CPU time of this process, all threads, 0 where unsupported. */
    static long processCpuNs() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? Math.max(0, os.getProcessCpuTime())
                : 0;
    }

    /**
     * A loop's share of the run: running, waiting for a core while runnable, and the rest asleep
     * (waiting for work: the peer's datagrams, an ACK, a timer). The last is what the two loops'
     * pipeline leaves idle; the second is what other threads on the machine took.
     */
    private static String shares(long cpuNs, long runQueueNs, boolean noRunQueue, long wallNs) {
        double wall = Math.max(1, wallNs);
        if (noRunQueue) {
            return String.format("%.0f%%", 100 * cpuNs / wall);
        }
        return String.format(
                "%.0f%%, waited for a core %.0f%%, asleep %.0f%%",
                100 * cpuNs / wall, 100 * runQueueNs / wall, Math.max(0, 100 * (wallNs - cpuNs - runQueueNs) / wall));
    }

    /**
     * Time host A's or host B's event-loop thread has spent runnable but waiting for a core, from
     * {@code /proc/thread-self/schedstat}; -1 where there is none.
     */
    private static long loopRunQueueNs(RealTimeTwoHostLab lab, boolean hostA) {
        java.util.function.Supplier<Long> own = BenchCommand::threadRunQueueNs;
        return hostA ? lab.onA(own) : lab.onB(own);
    }

    /** The calling thread's time waiting on a run queue (ns), -1 where unknown. */
    static long threadRunQueueNs() {
        try {
            String[] f = Files.readString(Path.of("/proc/thread-self/schedstat"))
                    .trim()
                    .split(" ");
            return f.length >= 2 ? Long.parseLong(f[1]) : -1;
        } catch (IOException | RuntimeException e) {
            return -1; // not Linux, or no scheduler statistics
        }
    }

    /** Heap bytes allocated by both hosts' event-loop threads, 0 where unsupported. */
    private static long loopAllocatedBytes(RealTimeTwoHostLab lab) {
        java.util.function.Supplier<Long> own =
                () -> ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                        ? Math.max(0, t.getCurrentThreadAllocatedBytes())
                        : 0L;
        return lab.onA(own) + lab.onB(own);
    }

    private TransportConfig transportConfig() {
        return windowBytes > 0 ? RealTimeProfile.transport().withWindowBytes(windowBytes) : RealTimeProfile.transport();
    }

    /**
     * CPU time of host A's (the WRITE sender's) or host B's event-loop thread (vSwitch + vNIC +
     * sockets), 0 where unsupported.
     */
    private static long loopCpuNs(RealTimeTwoHostLab lab, boolean hostA) {
        java.util.function.Supplier<Long> own =
                () -> Math.max(0, ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime());
        return hostA ? lab.onA(own) : lab.onB(own);
    }

    /** Both hosts' {@link NettyUnderlay#dataPathCounters()} added up. */
    private static long[] underlayCounters(RealTimeTwoHostLab lab) {
        long[] sum = new long[8];
        for (VSwitchHost h : new VSwitchHost[] {lab.hostA(), lab.hostB()}) {
            long[] c = h.call(vs -> h.underlay().dataPathCounters());
            for (int i = 0; i < sum.length; i++) {
                sum[i] += c[i];
            }
        }
        return sum;
    }

    private static String busyPoll(long[] from, long[] to, long roundTrips, long runNs) {
        double n = Math.max(1, roundTrips);
        return String.format(
                "%.2f datagrams found while polling (%.2f read directly, without epoll), %.1f empty polls, %.2f"
                        + " spins ran out (the loop slept); %d polls cut short by losing the core (each a back-off:"
                        + " the loop sleeps instead; gaps <100 us %d, <300 us %d, <1 ms %d, longer %d), backed off"
                        + " %.0f ms of the run's %.0f ms per loop (back-offs begun: %.0f ms), back-off halved %d times"
                        + " after hits without a lost core; %d short gaps (50-300 us)",
                (to[1] - from[1]) / n,
                (to[3] - from[3]) / n,
                (to[0] - from[0]) / n,
                (to[4] - from[4]) / n,
                to[2] - from[2],
                to[6] - from[6],
                to[7] - from[7],
                to[8] - from[8],
                to[9] - from[9],
                (to[11] - from[11]) / 2e6,
                runNs / 1e6,
                (to[5] - from[5]) / 2e6,
                to[12] - from[12],
                to[10] - from[10]);
    }

    private static String perOp(String label, long[] from, long[] to, long ops, long acks) {
        double n = Math.max(1, ops);
        return String.format(
                "%s %.1f datagrams%s (%.1f with the payload sent from the memory region), %.2f GSO sends,"
                        + " %.2f flushes (%.2f sendmmsg calls), %.2f read bursts, %.2f recvmmsg calls",
                label,
                (to[0] - from[0]) / n,
                acks >= 0 ? String.format(" (%.1f ACKs)", acks / n) : "",
                (to[6] - from[6]) / n,
                (to[1] - from[1]) / n,
                (to[2] - from[2]) / n,
                (to[7] - from[7]) / n,
                (to[4] - from[4]) / n,
                (to[5] - from[5]) / n);
    }

    /**
     * WRITE runs until {@code durationNs} have passed (at most 16 runs, each sized by the pace of
     * the previous one), as one row: the rate is bytes over the runs' own elapsed times.
     */
    private BandwidthRow measureBandwidth(PerftestSuite suite, double nsPerWrite, long durationNs) {
        long start = System.nanoTime();
        long iterations = 0;
        double elapsedNs = 0;
        boolean intact = true;
        double pace = nsPerWrite;
        for (int run = 0; run < 16; run++) {
            long left = durationNs - (System.nanoTime() - start);
            if (left <= 0) {
                break;
            }
            BandwidthRow r = suite.bandwidth(WrOpcode.RDMA_WRITE, sizeBytes, clamp(left / pace, 16, 50_000_000));
            double ns = r.gbps() > 0 ? r.iterations() * (double) sizeBytes * 8 / r.gbps() : 0;
            iterations += r.iterations();
            elapsedNs += ns;
            intact &= r.intact();
            pace = Math.max(1, ns / r.iterations());
        }
        double gbps = elapsedNs > 0 ? iterations * (double) sizeBytes * 8 / elapsedNs : 0;
        double mpps = elapsedNs > 0 ? iterations * 1e3 / elapsedNs : 0;
        return new BandwidthRow(WrOpcode.RDMA_WRITE, sizeBytes, iterations, gbps, mpps, intact);
    }

    /**
     * A warm-up that goes on past {@code ns} while the JIT still compiles (see {@link
     * #warmUpUntilJitSettles}): its pace, length, and whether the JIT had settled when it ended.
     */
    record WarmUp(double nsPerIteration, long elapsedNs, boolean jitSettled, long compileMs) {
        String describe(String workload, long plannedNs) {
            if (elapsedNs <= plannedNs + SETTLE_RUN_NS / 2 && jitSettled) {
                return String.format("%s %.1f s (JIT settled)", workload, elapsedNs / 1e9);
            }
            return String.format(
                    "%s %.1f s, %.1f s past the planned %.1f s %s (JIT compile time during the warm-up %d ms)",
                    workload,
                    elapsedNs / 1e9,
                    (elapsedNs - plannedNs) / 1e9,
                    plannedNs / 1e9,
                    jitSettled
                            ? "until the JIT settled"
                            : "and the JIT was STILL COMPILING: figures may be of code" + " not yet fully compiled",
                    compileMs);
        }
    }

    /** Quiet time (no JIT compilation) after which the JIT counts as settled. */
    static final long SETTLE_QUIET_NS = 500_000_000L;
    /** Length of each run once the planned warm-up time has passed. */
    static final long SETTLE_RUN_NS = 250_000_000L;
    /**
     * The longest warm-up, in planned warm-up times, and at most {@link #SETTLE_LIMIT_MAX_NS}: the
     * latency path took 12.6 s to settle at a load average of 20 (the SEND p50 then 5.4 us, where a
     * 6 s warm-up had left it at 8.6-17 us).
     */
    static final int SETTLE_LIMIT_FACTOR = 10;

    static final long SETTLE_LIMIT_MAX_NS = 20_000_000_000L;

    /**
     * {@link #warmUp}, then more runs of {@link #SETTLE_RUN_NS} while the JIT is still compiling, until
     * runs totalling {@link #SETTLE_QUIET_NS} passed without a compilation, for at most {@link
     * #SETTLE_LIMIT_FACTOR} times {@code ns} (and {@link #SETTLE_LIMIT_MAX_NS}). On a busy machine the compiler threads get little CPU:
     * the event loops' receive path was seen still in C1's profiling code (no C2 version of {@code
     * DatagramReceiver.deliver}) at the end of a 3 s run under a load average of 24, and the round
     * trip measured then was that code's, 20-40x the compiled one's.
     *
     * @param compileMs the JIT's total compilation time so far in ms, negative where unknown (the
     *     warm-up is then {@link #warmUp}'s)
     */
    static WarmUp warmUpUntilJitSettles(
            java.util.function.LongConsumer run,
            long first,
            long ns,
            java.util.function.LongSupplier clockNs,
            java.util.function.LongSupplier compileMs) {
        long start = clockNs.getAsLong();
        long compile0 = compileMs.getAsLong();
        boolean monitored = compile0 >= 0;
        long n = first;
        double pace = 1;
        long quietNs = 0;
        long limitNs = Math.max(ns, Math.min(SETTLE_LIMIT_FACTOR * ns, SETTLE_LIMIT_MAX_NS));
        // Bounded by the time limit and by this many runs.
        for (int i = 0; i < 32 + 2 * limitNs / SETTLE_RUN_NS; i++) {
            long c0 = compileMs.getAsLong();
            long t0 = clockNs.getAsLong();
            run.accept(n);
            long t1 = clockNs.getAsLong();
            pace = Math.max(1, (double) (t1 - t0) / n);
            quietNs = compileMs.getAsLong() == c0 ? quietNs + (t1 - t0) : 0;
            long elapsed = t1 - start;
            if (elapsed < ns) {
                // Runs of at most SETTLE_RUN_NS: a compilation early in the warm-up leaves the runs after it quiet.
                n = clamp(Math.min(ns - elapsed, SETTLE_RUN_NS) / pace, first, 50_000_000L);
                continue;
            }
            if (!monitored || quietNs >= SETTLE_QUIET_NS || elapsed >= limitNs) {
                break;
            }
            n = clamp(SETTLE_RUN_NS / pace, first, 50_000_000L);
        }
        long elapsedNs = clockNs.getAsLong() - start;
        return new WarmUp(
                pace,
                elapsedNs,
                !monitored || quietNs >= SETTLE_QUIET_NS,
                monitored ? compileMs.getAsLong() - compile0 : -1);
    }

    /** The JIT's total compilation time in ms, -1 where the JVM does not report it. */
    static long jitCompileMs() {
        var jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /**
     * Warms up for {@code ns}: runs of {@code first} iterations, then each sized by the previous run's
     * pace to the time left (at most 32 runs), so the JIT has compiled the path before the
     * measurement however slow the first, interpreted runs were. Returns ns per iteration of the last.
     */
    private static double warmUp(java.util.function.LongConsumer run, long first, long ns) {
        long start = System.nanoTime();
        long n = first;
        double pace = 1;
        for (int i = 0; i < 32; i++) {
            long t0 = System.nanoTime();
            run.accept(n);
            long t1 = System.nanoTime();
            pace = Math.max(1, (double) (t1 - t0) / n);
            long left = ns - (t1 - start);
            if (left <= 0) {
                break;
            }
            n = clamp(left / pace, first, 50_000_000L);
        }
        return pace;
    }

    private static long clamp(double v, long min, long max) {
        return Math.max(min, Math.min(max, (long) v));
    }

    /** The machine's idle state and what it means for the blocking baselines, two lines. */
    static void idleStateLines(PrintWriter out, CpuIdleState idle) {
        out.println("idle CPUs: " + idle.describe());
        out.println("  so: " + idle.meaning());
    }

    private static void latencyLine(PrintWriter out, String label, long rdmaNs, long tcpNs) {
        out.printf("%-44s %14.2f %14.2f %12.2f%n", label, rdmaNs / 1e3, tcpNs / 1e3, ratio(rdmaNs, tcpNs));
    }

    private static double ratio(double a, double b) {
        return b <= 0 ? Double.NaN : a / b;
    }

    private static String onOff(boolean b) {
        return b ? "on" : "off";
    }

    static String machine(String transport) {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return String.format(
                "%d cores (%s); %s %s; %s %s; Netty %s; Unsafe %s; leak detection %s; load average %.2f",
                Runtime.getRuntime().availableProcessors(),
                cpuModel(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"),
                System.getProperty("os.name"),
                System.getProperty("os.version"),
                transport,
                PlatformDependent.hasUnsafe() ? "on" : "off",
                ResourceLeakDetector.getLevel().name().toLowerCase(java.util.Locale.ROOT),
                load);
    }

    private static String cpuModel() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String l : lines) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable
        }
        return "unknown CPU";
    }

    /** The kernel's UDP RcvbufErrors counter, or -1 where there is none. */
    static long udpRcvbufErrors() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/net/snmp"));
            for (int i = 0; i + 1 < lines.size(); i++) {
                if (lines.get(i).startsWith("Udp:") && lines.get(i + 1).startsWith("Udp:")) {
                    String[] names = lines.get(i).split("\\s+");
                    String[] values = lines.get(i + 1).split("\\s+");
                    for (int k = 0; k < names.length && k < values.length; k++) {
                        if (names[k].equals("RcvbufErrors")) {
                            return Long.parseLong(values[k]);
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    private static TransportCounters minus(TransportCounters a, TransportCounters b) {
        TransportCounters d = new TransportCounters();
        d.txPackets = a.txPackets - b.txPackets;
        d.retransmittedPackets = a.retransmittedPackets - b.retransmittedPackets;
        d.timeouts = a.timeouts - b.timeouts;
        d.tailProbes = a.tailProbes - b.tailProbes;
        d.seqNaksSent = a.seqNaksSent - b.seqNaksSent;
        d.duplicateRequests = a.duplicateRequests - b.duplicateRequests;
        return d;
    }
}
