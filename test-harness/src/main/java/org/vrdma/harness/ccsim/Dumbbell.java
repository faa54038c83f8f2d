package org.vrdma.harness.ccsim;

import java.util.ArrayList;
import java.util.List;
import org.vrdma.cc.ConfiguredAlgorithm;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.VirtualTimeScheduler;

/**
 * A packet-level dumbbell in virtual time: N senders, one shared bottleneck port (RED/ECN, tail
 * drop, INT), N receivers, driven by {@link VirtualTimeScheduler}. Every flow runs a congestion
 * control through the SPI exactly as the transport does; the run is deterministic for a seed.
 */
public final class Dumbbell {
    /** Interval at which delivered bytes are sampled for throughput and fairness. */
    public static final long SAMPLE_NS = 100_000;

    private final DumbbellConfig config;
    private final VirtualTimeScheduler scheduler;
    private final BottleneckPort bottleneck;
    private final List<FlowSender> flows = new ArrayList<>();
    private final List<long[]> samples = new ArrayList<>();
    private final TimerHandler sampler = this::onSample;

    /** An empty dumbbell of the given shape. */
    public Dumbbell(final DumbbellConfig config) {
        this.config = config;
        this.scheduler = new VirtualTimeScheduler(config.seed());
        this.bottleneck = new BottleneckPort(scheduler, config);
        scheduler.scheduleAt(0, sampler);
    }

    /**
     * Adds a flow of {@code sizeBytes} (Long.MAX_VALUE for a long-running flow) starting at {@code
     * startNs}.
     *
     * @return the flow's index
     */
    public int addFlow(final ConfiguredAlgorithm algorithm, final long startNs, final long sizeBytes) {
        final int index = flows.size();
        final FlowContext context =
                FlowContext.of(config.lineRateBps(), config.baseRttNs(), config.mtuBytes(), config.seed() + index);
        final FlowSender sender = new FlowSender(scheduler, config, bottleneck, algorithm.create(context), sizeBytes);
        flows.add(sender);
        scheduler.scheduleAt(startNs, (t, id) -> sender.start(t));
        return index;
    }

    /** Runs until {@code endNs} of virtual time. */
    public void runUntil(final long endNs) {
        scheduler.runUntil(endNs);
    }

    /** Runs until every flow has completed or {@code endNs}; true if all completed. */
    public boolean runUntilCompleted(final long endNs) {
        return scheduler.runUntil(this::allCompleted, endNs);
    }

    /** Current virtual time. */
    public long nowNs() {
        return scheduler.nowNs();
    }

    /** Goodput of flow {@code flow} between two sample times (multiples of {@link #SAMPLE_NS}). */
    public double throughputBps(final int flow, final long fromNs, final long toNs) {
        final long[] from = samples.get((int) (fromNs / SAMPLE_NS));
        final long[] to = samples.get((int) (toNs / SAMPLE_NS));
        final long fromBytes = flow < from.length ? from[flow] : 0;
        return (to[flow] - fromBytes) * 8e9 / (toNs - fromNs);
    }

    /** Jain's fairness index of the flows' goodputs between two sample times. */
    public double jainIndex(final long fromNs, final long toNs) {
        double sum = 0;
        double sumSquares = 0;
        for (int i = 0; i < flows.size(); i++) {
            final double x = throughputBps(i, fromNs, toNs);
            sum += x;
            sumSquares += x * x;
        }
        return sumSquares == 0 ? 0 : sum * sum / (flows.size() * sumSquares);
    }

    /** Sum of all flows' goodput between two sample times. */
    public double aggregateThroughputBps(final long fromNs, final long toNs) {
        double sum = 0;
        for (int i = 0; i < flows.size(); i++) {
            sum += throughputBps(i, fromNs, toNs);
        }
        return sum;
    }

    /** Percentile of the bottleneck queue seen by arriving packets, in bytes. */
    public long queuePercentileBytes(final double percentile) {
        return bottleneck.queuePercentileBytes(percentile);
    }

    /** Largest bottleneck queue, in bytes. */
    public long maxQueueBytes() {
        return bottleneck.maxQueueBytes();
    }

    /** Forgets queue statistics so far, for example a warm-up phase. */
    public void resetQueueStatistics() {
        bottleneck.resetQueueStatistics();
    }

    /** Packets dropped at the bottleneck. */
    public long drops() {
        return bottleneck.drops();
    }

    /** Packets marked CE at the bottleneck. */
    public long marks() {
        return bottleneck.marks();
    }

    /** Bytes the senders sent again after a NAK or timeout. */
    public long retransmittedBytes() {
        long sum = 0;
        for (final FlowSender flow : flows) {
            sum += flow.retransmittedBytes();
        }
        return sum;
    }

    /** The congestion control of flow {@code flow}, for inspection. */
    public CongestionControl congestionControl(final int flow) {
        return flows.get(flow).congestionControl();
    }

    /** Retransmission timeouts of all senders. */
    public long timeouts() {
        long sum = 0;
        for (final FlowSender flow : flows) {
            sum += flow.timeouts();
        }
        return sum;
    }

    /** Bytes delivered in order to flow {@code flow}'s receiver. */
    public long deliveredBytes(final int flow) {
        return flows.get(flow).deliveredBytes();
    }

    /** Whether every flow has all its bytes acknowledged. */
    public boolean allCompleted() {
        for (final FlowSender flow : flows) {
            if (!flow.completed()) {
                return false;
            }
        }
        return true;
    }

    /** Longest flow completion time, or -1 if a flow has not completed. */
    public long maxCompletionTimeNs() {
        long max = 0;
        for (final FlowSender flow : flows) {
            if (!flow.completed()) {
                return -1;
            }
            max = Math.max(max, flow.completionTimeNs());
        }
        return max;
    }

    /** The shape of this dumbbell. */
    public DumbbellConfig config() {
        return config;
    }

    private void onSample(final long nowNs, final long timerId) {
        final long[] delivered = new long[flows.size()];
        for (int i = 0; i < delivered.length; i++) {
            delivered[i] = flows.get(i).deliveredBytes();
        }
        samples.add(delivered);
        scheduler.scheduleAt(nowNs + SAMPLE_NS, sampler);
    }
}
