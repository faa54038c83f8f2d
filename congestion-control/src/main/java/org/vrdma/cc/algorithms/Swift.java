package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.cc.SendTimeLog;
import org.vrdma.cc.SimpleProvider;

/**
 * Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
 * Datacenter", SIGCOMM 2020): AIMD on a congestion window against a target delay.
 *
 * <ul>
 *   <li>target = base target + hops &times; h + flow scaling, where flow scaling is {@code
 *       max(0, min(a / sqrt(cwnd) + b, fs_range))} with a and b chosen so it is fs_range at
 *       fs_min_cwnd and 0 at fs_max_cwnd (cwnd in packets);
 *   <li>delay below target: {@code cwnd += ai * acked / cwnd} (or {@code ai * acked} below one
 *       packet);
 *   <li>delay above target, at most once per RTT: {@code cwnd *= max(1 - beta (delay - target) /
 *       delay, 1 - max_mdf)};
 *   <li>fast-recovery loss: {@code cwnd *= 1 - max_mdf} (once per RTT); retransmission timeouts
 *       likewise, and {@value #RETX_RESET_THRESHOLD} in a row reset cwnd to its minimum;
 *   <li>below one packet, the window cannot pace any more, so Swift paces: one packet every {@code
 *       rtt / cwnd}.
 * </ul>
 *
 * The delay is the RTT of the packet that triggered the ACK ({@link SendTimeLog}): the paper takes
 * the time the receiver held the ACK out of the delay, and a receiver that coalesces ACKs holds the
 * first packets of a group for as long as the sender takes to pace out the rest, which below one
 * packet per RTT is the whole pacing interval. The hop count comes from INT when the ACK carries it,
 * {@code hops} otherwise.
 */
public final class Swift implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "swift";

    /** Consecutive timeouts after which cwnd falls to its minimum. */
    public static final int RETX_RESET_THRESHOLD = 5;

    private final Config config;
    private final long lineRateBps;
    private final int mtuBytes;
    private final long baseTargetNs;
    private final double fsAlpha;
    private final double fsBeta;
    private final double maxCwnd;

    private double cwnd;
    private long rttNs;
    private long lastDecreaseNs = Long.MIN_VALUE / 2;
    private int consecutiveTimeouts;
    /** cwnd before the first of the current run of timeouts, restored if they prove spurious. */
    private double cwndBeforeTimeouts;

    private int hops;
    private long cachedWindowBytes;
    private long cachedRateBps;
    private final SendTimeLog sendTimes;

    /** Creates the control of one flow with the flow's initial window. */
    public Swift(final FlowContext flow, final Config config) {
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.mtuBytes = flow.mtuBytes();
        this.baseTargetNs = config.baseTargetNs == 0 ? flow.baseRttNs() : config.baseTargetNs;
        final double fsRangeNs = config.fsRange * baseTargetNs;
        this.fsAlpha = fsRangeNs / (1 / Math.sqrt(config.fsMinCwnd) - 1 / Math.sqrt(config.fsMaxCwnd));
        this.fsBeta = -fsAlpha / Math.sqrt(config.fsMaxCwnd);
        this.maxCwnd = config.maxCwnd == 0 ? Math.max(1.0, 4.0 * flow.initialWindowBytes() / mtuBytes) : config.maxCwnd;
        this.cwnd = clamp((double) flow.initialWindowBytes() / mtuBytes);
        this.rttNs = flow.baseRttNs();
        this.hops = config.hops;
        this.sendTimes = new SendTimeLog(mtuBytes);
        publish();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes) {
        sendTimes.onSent(nowNs);
    }

    @Override
    public void onAck(final long nowNs, final long ackedBytes, final long sampleRttNs, final boolean ecnEcho) {
        consecutiveTimeouts = 0;
        final long rttNs = sendTimes.onAck(nowNs, ackedBytes, sampleRttNs);
        if (rttNs < 0) {
            return;
        }
        this.rttNs = Math.max(1, rttNs);
        final double ackedPackets = (double) ackedBytes / mtuBytes;
        final double targetNs = targetDelayNs();
        if (rttNs < targetNs) {
            cwnd += cwnd >= 1 ? config.ai * ackedPackets / cwnd : config.ai * ackedPackets;
        } else if (canDecrease(nowNs)) {
            final double factor = Math.max(1 - config.beta * (rttNs - targetNs) / rttNs, 1 - config.maxMdf);
            cwnd *= factor;
            lastDecreaseNs = nowNs;
        }
        cwnd = clamp(cwnd);
        publish();
    }

    @Override
    public void onInt(final long nowNs, final IntTelemetry telemetry) {
        if (telemetry.hopCount() > 0) {
            hops = telemetry.hopCount();
        }
    }

    @Override
    public void onLoss(final long nowNs, final long lostBytes) {
        consecutiveTimeouts = 0;
        sendTimes.onLoss();
        multiplicativeDecrease(nowNs);
    }

    @Override
    public void onTimeout(final long nowNs) {
        sendTimes.onTimeout();
        if (consecutiveTimeouts == 0) {
            cwndBeforeTimeouts = cwnd;
        }
        if (++consecutiveTimeouts >= RETX_RESET_THRESHOLD) {
            cwnd = config.minCwnd;
            lastDecreaseNs = nowNs;
            publish();
        } else {
            multiplicativeDecrease(nowNs);
        }
    }

    /**
     * Undoes the timeouts' decrease (as Linux undoes a spurious RTO's cwnd reduction): the resent
     * packet had arrived, the timeout was a delay spike that the delay signal already answers.
     */
    @Override
    public void onSpuriousTimeout(final long nowNs) {
        if (cwndBeforeTimeouts > cwnd) {
            cwnd = clamp(cwndBeforeTimeouts);
            publish();
        }
        cwndBeforeTimeouts = 0;
        consecutiveTimeouts = 0;
    }

    /**
     * No window change (the loss is not confirmed), but the send-time log must know the resent
     * packets: otherwise it takes later ACKs for earlier packets and adds pacing gaps to the delay.
     */
    @Override
    public void onResend(final long nowNs) {
        sendTimes.onLoss();
    }

    @Override
    public long rateBps() {
        return cachedRateBps;
    }

    @Override
    public long windowBytes() {
        return cachedWindowBytes;
    }

    /** Congestion window in packets; may be below one. */
    public double cwndPackets() {
        return cwnd;
    }

    /** The current target delay, which grows as cwnd shrinks. */
    public double targetDelayNs() {
        final double flowScalingNs =
                Math.max(0, Math.min(fsAlpha / Math.sqrt(cwnd) + fsBeta, config.fsRange * baseTargetNs));
        return baseTargetNs + (double) hops * config.hopScaleNs + flowScalingNs;
    }

    private void multiplicativeDecrease(final long nowNs) {
        if (canDecrease(nowNs)) {
            cwnd = clamp(cwnd * (1 - config.maxMdf));
            lastDecreaseNs = nowNs;
            publish();
        }
    }

    private boolean canDecrease(final long nowNs) {
        return nowNs - lastDecreaseNs >= rttNs;
    }

    private double clamp(final double packets) {
        return Math.max(config.minCwnd, Math.min(maxCwnd, packets));
    }

    private void publish() {
        cachedWindowBytes = Math.max(1, (long) (cwnd * mtuBytes));
        if (cwnd >= 1) {
            cachedRateBps = lineRateBps;
        } else {
            // One packet per rtt / cwnd.
            final double paceBps = cwnd * mtuBytes * 8e9 / rttNs;
            cachedRateBps = Math.max(1, Math.min(lineRateBps, (long) paceBps));
        }
    }

    @Override
    public String toString() {
        return "Swift[cwnd=" + cwnd + ", rttNs=" + rttNs + "]";
    }

    /** Parameters of {@link Swift}; defaults from the paper and its published reimplementations. */
    public static final class Config implements CcConfig {
        private long baseTargetNs;
        private long hopScaleNs = 1_000;
        private int hops = 1;
        private double fsRange = 5.0;
        private double fsMinCwnd = 0.1;
        private double fsMaxCwnd = 100;
        private double ai = 1.0;
        private double beta = 0.8;
        private double maxMdf = 0.5;
        private double minCwnd = 0.001;
        private double maxCwnd;

        /** Base target delay; 0 (default) means the flow's base RTT. */
        public long baseTargetNs() {
            return baseTargetNs;
        }

        /** Sets {@link #baseTargetNs()}. */
        public Config baseTargetNs(final long ns) {
            this.baseTargetNs = ns;
            return this;
        }

        /** Per-hop scaling of the target (h). */
        public long hopScaleNs() {
            return hopScaleNs;
        }

        /** Sets {@link #hopScaleNs()}. */
        public Config hopScaleNs(final long ns) {
            this.hopScaleNs = ns;
            return this;
        }

        /** Hops assumed until INT reports the path. */
        public int hops() {
            return hops;
        }

        /** Flow-scaling range, as a multiple of the base target. */
        public double fsRange() {
            return fsRange;
        }

        /** Sets {@link #fsRange()}. */
        public Config fsRange(final double multiple) {
            this.fsRange = multiple;
            return this;
        }

        /** cwnd (packets) at which flow scaling is the whole range. */
        public double fsMinCwnd() {
            return fsMinCwnd;
        }

        /** cwnd (packets) at which flow scaling vanishes. */
        public double fsMaxCwnd() {
            return fsMaxCwnd;
        }

        /** Additive increment, packets per RTT. */
        public double ai() {
            return ai;
        }

        /** Multiplicative-decrease gain. */
        public double beta() {
            return beta;
        }

        /** Maximum multiplicative decrease per RTT. */
        public double maxMdf() {
            return maxMdf;
        }

        /** Floor of cwnd, packets. */
        public double minCwnd() {
            return minCwnd;
        }

        /** Ceiling of cwnd, packets; 0 (default) means four times the initial window. */
        public double maxCwnd() {
            return maxCwnd;
        }

        @Override
        public void validate() {
            CcConfig.requireNonNegative(baseTargetNs, "baseTargetNs");
            CcConfig.requireNonNegative(hopScaleNs, "hopScaleNs");
            CcConfig.requireNonNegative(hops, "hops");
            CcConfig.requireNonNegative(fsRange, "fsRange");
            CcConfig.requirePositive(fsMinCwnd, "fsMinCwnd");
            CcConfig.require(
                    fsMaxCwnd > fsMinCwnd, "fsMaxCwnd", "must exceed fsMinCwnd (" + fsMinCwnd + "), was " + fsMaxCwnd);
            CcConfig.requirePositive(ai, "ai");
            CcConfig.requireOpenClosed(beta, 0, 1, "beta");
            CcConfig.require(maxMdf > 0 && maxMdf < 1, "maxMdf", "must be in (0,1), was " + maxMdf);
            CcConfig.requirePositive(minCwnd, "minCwnd");
            CcConfig.require(
                    maxCwnd == 0 || maxCwnd >= minCwnd, "maxCwnd", "must be 0 or at least minCwnd, was " + maxCwnd);
        }
    }

    /** Registers {@link Swift} as {@value #NAME}. */
    public static final class Provider extends SimpleProvider<Config> {
        public Provider() {
            super(NAME, Config.class, Swift::new);
        }
    }
}
