package org.vrdma.harness.cli;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.vrdma.harness.perf.PerftestSuite;
import org.vrdma.harness.perf.PerftestSuite.BandwidthRow;
import org.vrdma.harness.perf.PerftestSuite.LatencyRow;
import org.vrdma.harness.perf.RealTimeProfile;
import org.vrdma.harness.perf.RealTimeTwoHostLab;
import org.vrdma.harness.perf.TwoHostLab;
import org.vrdma.harness.perf.VirtualTwoHostLab;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.WrOpcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The main job on the embedded default: a two-host VPC in this process (vSwitch + vNIC per host,
 * Geneve over real UDP on 127.0.0.1), RC queue pairs, and perftest-style runs — WRITE bandwidth
 * over message sizes, SEND latency, READ bandwidth — first on a clean overlay, then with loss
 * injected by the vSwitches.
 */
@Command(
        name = "demo",
        description =
                "Bring up a two-host VPC in this process and run perftest-style RDMA traffic over the lossy overlay.")
final class DemoCommand implements Callable<Integer> {
    private static final int BUFFER_BYTES = 2 << 20;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--loss",
            defaultValue = "0.01",
            description = "Loss injected in the second round, 0..1 (default ${DEFAULT-VALUE}).")
    double loss;

    @Option(
            names = "--recovery",
            defaultValue = "sr",
            description = "Loss recovery: sr (selective repeat) or gbn (go-back-N); default ${DEFAULT-VALUE}.")
    String recovery;

    @Option(
            names = "--virtual",
            description = "Run in virtual time over modelled 100 Gbit/s links instead of real UDP.")
    boolean virtual;

    @Option(
            names = "--busy-poll-us",
            defaultValue = "100",
            description = "Microseconds each host's event loop keeps polling its socket after its last event before it"
                    + " sleeps, as RDMA applications poll their CQs; a loop that loses its core while polling sleeps"
                    + " instead for a while (0: sleep at once); default ${DEFAULT-VALUE}.")
    long busyPollUs;

    @Option(names = "--quick", description = "Fewer sizes and iterations (a smoke run).")
    boolean quick;

    @Option(
            names = "--seed",
            defaultValue = "1",
            description = "Seed of the injected faults (default ${DEFAULT-VALUE}).")
    long seed;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        RecoveryMode mode = switch (recovery) {
            case "sr" -> RecoveryMode.SELECTIVE_REPEAT;
            case "gbn" -> RecoveryMode.GO_BACK_N;
            default ->
                throw new picocli.CommandLine.ParameterException(
                        spec.commandLine(), "--recovery must be sr or gbn, not " + recovery);
        };
        if (!(loss >= 0 && loss < 1)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--loss must be in [0, 1)");
        }
        if (busyPollUs < 0 || busyPollUs > 1_000_000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--busy-poll-us must be 0..1000000");
        }
        // Over real sockets the RTT includes two event loops and the kernel: see RealTimeProfile.
        TransportConfig config = virtual ? TransportConfig.defaults() : RealTimeProfile.transport();
        try (TwoHostLab lab = openLab(config)) {
            out.println("vrdma demo: " + lab.describe());
            out.println("RC queue pairs, MTU 4096, recovery " + mode + ", tx depth 64");
            out.flush();
            PerftestSuite suite = new PerftestSuite(lab, mode, 64, (virtual ? 10L : 120L) * 1_000_000_000L);
            if (!virtual) {
                // The JIT compiles the data path during the first few thousand packets; an
                // unreported warm-up keeps that out of the figures, as perftest's warm-up does.
                suite.bandwidth(WrOpcode.RDMA_WRITE, 4096, quick ? 2_000 : 20_000);
                suite.latency(64, quick ? 1_000 : 5_000);
            }
            runRound(out, lab, suite, "clean overlay");
            if (loss > 0) {
                FaultConfig faults = FaultConfig.randomLoss(loss);
                lab.faults(faults, faults);
                runRound(out, lab, suite, String.format("%.2f%% loss on data and control packets", loss * 100));
                lab.faults(FaultConfig.NONE, FaultConfig.NONE);
            }
        }
        return 0;
    }

    /** The two hosts, in virtual or real time; --seed seeds the injected faults in both. */
    TwoHostLab openLab(TransportConfig config) throws InterruptedException {
        return virtual
                ? new VirtualTwoHostLab(
                        seed,
                        LinkConfig.of(100_000_000_000L, 5_000).withQueueCapacityBytes(4 << 20),
                        config,
                        PooledByteBufAllocator.DEFAULT,
                        BUFFER_BYTES)
                : new RealTimeTwoHostLab(config, BUFFER_BYTES, busyPollUs * 1000, seed);
    }

    private void runRound(PrintWriter out, TwoHostLab lab, PerftestSuite suite, String label) {
        TransportCounters before = lab.transportCounters();
        long lossesBefore = lab.injectedLosses();
        long marksBefore = lab.ecnMarks();
        int[] writeSizes = quick ? new int[] {64, 4096, 65536} : new int[] {2, 64, 1024, 4096, 65536, 1 << 20};
        int[] readSizes = quick ? new int[] {65536} : new int[] {4096, 65536, 1 << 20};
        List<BandwidthRow> writes = new ArrayList<>();
        for (int size : writeSizes) {
            writes.add(suite.bandwidth(WrOpcode.RDMA_WRITE, size, iterations(size)));
        }
        PerftestSuite.printBandwidth(out, "RDMA_Write BW Test (" + label + ")", writes);
        out.flush();
        List<LatencyRow> lat = List.of(suite.latency(64, quick ? 500 : 5_000));
        PerftestSuite.printLatency(out, "Send Latency Test (" + label + ")", lat);
        out.flush();
        List<BandwidthRow> reads = new ArrayList<>();
        for (int size : readSizes) {
            reads.add(suite.bandwidth(WrOpcode.RDMA_READ, size, iterations(size)));
        }
        PerftestSuite.printBandwidth(out, "RDMA_Read BW Test (" + label + ")", reads);
        TransportCounters after = lab.transportCounters();
        TransportCounters delta = after.since(before);
        long losses = lab.injectedLosses() - lossesBefore;
        PerftestSuite.printCounters(out, delta, losses, lab.ecnMarks() - marksBefore);
        out.flush();
    }

    private long iterations(int sizeBytes) {
        long budgetBytes = quick ? 4L << 20 : 64L << 20;
        long maxIterations = quick ? 500 : 10_000;
        return Math.max(50, Math.min(maxIterations, budgetBytes / sizeBytes));
    }
}
