package org.vrdma.harness.perf;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * perftest-style runs over a {@link TwoHostLab}: RDMA WRITE and READ bandwidth over a range of
 * message sizes and SEND latency, printed as perftest prints them. Each bandwidth run checks that
 * the bytes arrived intact, so a figure is never reported for data that did not make it.
 */
public final class PerftestSuite {
    /** Outcome of one bandwidth run. */
    public record BandwidthRow(
            WrOpcode opcode, int sizeBytes, long iterations, double gbps, double mpps, boolean intact) {}

    /** Outcome of one latency run, in ns. */
    public record LatencyRow(int sizeBytes, long iterations, long p50Ns, long p99Ns, long p999Ns, long maxNs) {}

    private final TwoHostLab lab;
    private final RecoveryMode mode;
    private final int txDepth;
    private final long timeoutNs;
    private final QueuePair qpA;
    private final QueuePair qpB;
    private final SplittableRandom random = new SplittableRandom(7);

    /** Connects one RC QP pair in the lab with 4096-byte MTU. */
    public PerftestSuite(TwoHostLab lab, RecoveryMode mode, int txDepth, long timeoutNs) {
        this.lab = lab;
        this.mode = mode;
        this.txDepth = txDepth;
        this.timeoutNs = timeoutNs;
        qpA = lab.onA(() -> lab.a().createRcQp(mode, Math.max(txDepth, 32)));
        qpB = lab.onB(() -> lab.b().createRcQp(mode, Math.max(txDepth, 32)));
        int qpnA = qpA.qpNum();
        int qpnB = qpB.qpNum();
        lab.onA(() -> {
            RdmaEndpoint.connect(qpA, qpnB, lab.ipv4B(), lab.macB(), Mtu.MTU_4096, 0x100, 0x200);
            return null;
        });
        lab.onB(() -> {
            RdmaEndpoint.connect(qpB, qpnA, lab.ipv4A(), lab.macA(), Mtu.MTU_4096, 0x200, 0x100);
            return null;
        });
    }

    public RecoveryMode mode() {
        return mode;
    }

    /** A WRITE or READ bandwidth run of {@code iterations} messages of {@code sizeBytes}. */
    public BandwidthRow bandwidth(WrOpcode opcode, int sizeBytes, long iterations) {
        byte[] pattern = new byte[sizeBytes];
        random.nextBytes(pattern);
        // WRITE moves A's buffer to B's; READ brings B's buffer to A.
        RdmaEndpoint source = opcode == WrOpcode.RDMA_WRITE ? lab.a() : lab.b();
        RdmaEndpoint target = opcode == WrOpcode.RDMA_WRITE ? lab.b() : lab.a();
        onOwner(source, () -> source.memory().write(0, pattern, 0, sizeBytes));
        onOwner(target, () -> target.memory().write(0, new byte[sizeBytes], 0, sizeBytes));
        int rkey = lab.onB(() -> lab.b().mr().rkey());
        BandwidthTest test =
                new BandwidthTest(lab.a(), qpA, opcode, sizeBytes, iterations, txDepth, RdmaEndpoint.BUFFER_VA, rkey);
        lab.onA(() -> {
            test.start();
            return null;
        });
        if (!lab.await(test::isDone, timeoutNs)) {
            throw new IllegalStateException(String.format(
                    "%s %d B: %d of %d completed before the %d ms limit",
                    opcode, sizeBytes, test.completed(), iterations, timeoutNs / 1_000_000));
        }
        if (test.failure() != null) {
            throw new IllegalStateException(opcode + " " + sizeBytes + " B failed: " + test.failure());
        }
        byte[] arrived = new byte[sizeBytes];
        onOwner(target, () -> target.memory().read(0, arrived, 0, sizeBytes));
        return new BandwidthRow(
                opcode, sizeBytes, test.completed(), test.gbps(), test.mpps(), Arrays.equals(arrived, pattern));
    }

    /** A SEND ping-pong of {@code iterations} round trips. */
    public LatencyRow latency(int sizeBytes, long iterations) {
        LatencyTest test = new LatencyTest(lab.a(), qpA, lab.b(), qpB, sizeBytes, iterations);
        lab.onB(() -> {
            test.startResponder();
            return null;
        });
        lab.onA(() -> {
            test.startInitiator();
            return null;
        });
        if (!lab.await(test::isDone, timeoutNs)) {
            throw new IllegalStateException(String.format(
                    "SEND latency: %d of %d round trips before the %d ms limit",
                    test.completed(), iterations, timeoutNs / 1_000_000));
        }
        if (test.failure() != null) {
            throw new IllegalStateException("SEND latency failed: " + test.failure());
        }
        Histogram h = test.histogram();
        return new LatencyRow(
                sizeBytes,
                test.completed(),
                h.getValueAtPercentile(50),
                h.getValueAtPercentile(99),
                h.getValueAtPercentile(99.9),
                h.getMaxValue());
    }

    private void onOwner(RdmaEndpoint endpoint, Runnable action) {
        if (endpoint == lab.a()) {
            lab.onA(() -> {
                action.run();
                return null;
            });
        } else {
            lab.onB(() -> {
                action.run();
                return null;
            });
        }
    }

    /** Prints bandwidth rows as perftest does. */
    public static void printBandwidth(PrintWriter out, String title, Iterable<BandwidthRow> rows) {
        out.println("---------------------------------------------------------------------------------------");
        out.println("                    " + title);
        out.println("---------------------------------------------------------------------------------------");
        out.printf(
                " %-10s %-12s %-18s %-16s %-10s%n",
                "#bytes", "#iterations", "BW average[Gb/s]", "MsgRate[Mpps]", "data");
        for (BandwidthRow r : rows) {
            out.printf(
                    " %-10d %-12d %-18.2f %-16.6f %-10s%n",
                    r.sizeBytes(), r.iterations(), r.gbps(), r.mpps(), r.intact() ? "intact" : "CORRUPT");
        }
    }

    /** Prints latency rows as perftest does (microseconds). */
    public static void printLatency(PrintWriter out, String title, Iterable<LatencyRow> rows) {
        out.println("---------------------------------------------------------------------------------------");
        out.println("                    " + title);
        out.println("---------------------------------------------------------------------------------------");
        out.printf(
                " %-8s %-12s %-12s %-12s %-13s %-10s%n",
                "#bytes", "#iterations", "t_p50[usec]", "t_p99[usec]", "t_p99.9[usec]", "t_max[usec]");
        for (LatencyRow r : rows) {
            out.printf(
                    " %-8d %-12d %-12.2f %-12.2f %-13.2f %-10.2f%n",
                    r.sizeBytes(), r.iterations(), r.p50Ns() / 1e3, r.p99Ns() / 1e3, r.p999Ns() / 1e3, r.maxNs() / 1e3);
        }
    }

    /** Prints the transport counters that explain a run on a lossy network. */
    public static void printCounters(PrintWriter out, TransportCounters c, long injectedLosses, long ecnMarks) {
        out.printf(
                " counters: tx %d pkts, rx %d pkts, retransmitted %d, timeouts %d (%d spurious), NAK seq %d, duplicates %d,"
                        + " out-of-sequence %d, CNPs %d, ECN-marked %d; overlay dropped %d (injected), marked CE %d;"
                        + " tail probes %d%n",
                c.txPackets,
                c.rxPackets,
                c.retransmittedPackets,
                c.timeouts,
                c.spuriousTimeouts,
                c.seqNaksSent,
                c.duplicateRequests,
                c.outOfSequence,
                c.cnpsSent,
                c.ecnMarked,
                injectedLosses,
                ecnMarks,
                c.tailProbes);
    }
}
