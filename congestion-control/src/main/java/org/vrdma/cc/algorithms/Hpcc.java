package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.cc.RoundTracker;
import org.vrdma.cc.SimpleProvider;

/**
 * HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): window control from
 * in-network telemetry.
 *
 * <p>For every ACK with INT, each hop's utilisation is {@code u = txRate / B + qlen / (B T)} from
 * the change of its tx-bytes counter and timestamp since the previous ACK; the most utilised hop
 * gives U, smoothed over one base RTT T. The window is then {@code W = Wc / (U / eta) + W_AI} when
 * the path is at or above the target utilisation eta, or after maxStage additive steps, and {@code W
 * = Wc + W_AI} otherwise. The reference window Wc (and the stage) is updated once per RTT (when an
 * ACK acknowledges data sent after the last update); other ACKs react from Wc without moving it. The
 * pacing rate is {@code W / T}.
 *
 * <p>The window starts at, and never exceeds, W_init = B &times; T, one bandwidth-delay product of the
 * flow's line rate and base RTT (paper, Algorithm 1; the authors' simulator gives every QP the BDP of
 * the longest path and scales it with the rate), not the transport's window, which may hold more
 * (two BDPs in the virtual-time labs): a larger start puts the surplus into the bottleneck queue
 * before the first feedback returns. {@link Config#maxWindowBytes()} overrides it.
 */
public final class Hpcc implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "hpcc";

    private final Config config;
    private final long lineRateBps;
    private final long baseRttNs;
    private final double maxWindowBytes;
    private final double minWindowBytes;
    private final double waiBytes;

    private final long[] prevTxBytes = new long[IntTelemetry.MAX_HOPS];
    private final long[] prevTimestampNs = new long[IntTelemetry.MAX_HOPS];
    private final long[] prevQueueBytes = new long[IntTelemetry.MAX_HOPS];
    private int prevHops;

    private double windowBytes;
    private double referenceWindowBytes;
    private double utilisation;
    private int incStage;
    private final RoundTracker round;
    private long cachedWindowBytes;
    private long cachedRateBps;

    /** Creates the control of one flow, starting at the line-rate window (one BDP unless configured). */
    public Hpcc(final FlowContext flow, final Config config) {
        this.round = new RoundTracker(flow.mtuBytes());
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.baseRttNs = flow.baseRttNs();
        this.maxWindowBytes =
                config.maxWindowBytes > 0 ? config.maxWindowBytes : Math.max(flow.mtuBytes(), flow.bdpBytes());
        this.minWindowBytes = Math.max(1.0, (double) config.minRateBps * baseRttNs / 8e9);
        this.waiBytes = (double) config.raiBps * baseRttNs / 8e9;
        this.windowBytes = maxWindowBytes;
        this.referenceWindowBytes = maxWindowBytes;
        publish();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes) {
        round.onSent(bytes);
    }

    @Override
    public void onAck(final long nowNs, final long ackedBytes, final long rttNs, final boolean ecnEcho) {
        round.onAcked(ackedBytes);
    }

    /**
     * No window change: HPCC reacts to INT only (the paper leaves loss to the transport). The round
     * bookkeeping rewinds, so retransmissions do not delay the next reference-window update.
     */
    @Override
    public void onLoss(final long nowNs, final long lostBytes) {
        round.onLost(lostBytes);
    }

    /** No window change, as for {@link #onLoss}; everything unacknowledged will be sent again. */
    @Override
    public void onTimeout(final long nowNs) {
        round.onTimeout();
    }

    @Override
    public void onInt(final long nowNs, final IntTelemetry telemetry) {
        final int hops = telemetry.hopCount();
        if (hops == 0) {
            return;
        }
        if (!round.started() || hops != prevHops) {
            // First feedback (or a new path): only remember it.
            remember(telemetry);
            round.startRound();
            return;
        }
        double maxU = -1;
        long maxTauNs = 0;
        final double bdpBits = (double) lineRateBps * baseRttNs / 1e9;
        for (int i = 0; i < hops; i++) {
            final long tauNs = telemetry.timestampNs(i) - prevTimestampNs[i];
            if (tauNs <= 0) {
                continue;
            }
            final double linkBps = telemetry.linkRateBps(i);
            final double txBps = (double) (telemetry.txBytes(i) - prevTxBytes[i]) * 8e9 / tauNs;
            final long queueBytes = Math.min(telemetry.queueBytes(i), prevQueueBytes[i]);
            // Queue normalised by the flow's BDP at the hop's rate, as the paper's qlen / (B T).
            final double u = txBps / linkBps + queueBytes * 8.0 * lineRateBps / linkBps / bdpBits;
            if (u > maxU) {
                maxU = u;
                maxTauNs = tauNs;
            }
        }
        remember(telemetry);
        if (maxU < 0) {
            return;
        }
        final long tauNs = Math.min(maxTauNs, baseRttNs);
        utilisation = (utilisation * (baseRttNs - tauNs) + maxU * tauNs) / baseRttNs;

        final boolean fullUpdate = round.roundEnded();
        final double k = utilisation / config.eta;
        final int newStage;
        if (k >= 1 || incStage >= config.maxStage) {
            windowBytes = referenceWindowBytes / Math.max(k, 1e-9) + waiBytes;
            newStage = 0;
        } else {
            windowBytes = referenceWindowBytes + waiBytes;
            newStage = incStage + 1;
        }
        windowBytes = Math.max(minWindowBytes, Math.min(maxWindowBytes, windowBytes));
        if (fullUpdate) {
            referenceWindowBytes = windowBytes;
            incStage = newStage;
            round.startRound();
        }
        publish();
    }

    @Override
    public long rateBps() {
        return cachedRateBps;
    }

    @Override
    public long windowBytes() {
        return cachedWindowBytes;
    }

    /** The smoothed utilisation U of the most loaded hop. */
    public double utilisation() {
        return utilisation;
    }

    /** The reference window Wc. */
    public double referenceWindowBytes() {
        return referenceWindowBytes;
    }

    private void remember(final IntTelemetry telemetry) {
        prevHops = telemetry.hopCount();
        for (int i = 0; i < prevHops; i++) {
            prevTxBytes[i] = telemetry.txBytes(i);
            prevTimestampNs[i] = telemetry.timestampNs(i);
            prevQueueBytes[i] = telemetry.queueBytes(i);
        }
    }

    private void publish() {
        cachedWindowBytes = Math.max(1, (long) windowBytes);
        final double rate = windowBytes * 8e9 / baseRttNs;
        cachedRateBps = Math.max(1, Math.min(lineRateBps, (long) rate));
    }

    @Override
    public String toString() {
        return "Hpcc[W=" + (long) windowBytes + ", Wc=" + (long) referenceWindowBytes + ", U=" + utilisation + "]";
    }

    /** Parameters of {@link Hpcc}; defaults from the paper and its ns-3 simulator. */
    public static final class Config implements CcConfig {
        private double eta = 0.95;
        private int maxStage = 5;
        private long raiBps = 40_000_000;
        private long minRateBps = 100_000_000;
        private long maxWindowBytes;

        /** Target utilisation of the bottleneck. */
        public double eta() {
            return eta;
        }

        /** Sets {@link #eta()}. */
        public Config eta(final double eta) {
            this.eta = eta;
            return this;
        }

        /** Additive steps before a multiplicative adjustment is forced. */
        public int maxStage() {
            return maxStage;
        }

        /** Additive increase as a rate; W_AI = raiBps &times; T. */
        public long raiBps() {
            return raiBps;
        }

        /** Sets {@link #raiBps()}. */
        public Config raiBps(final long bps) {
            this.raiBps = bps;
            return this;
        }

        /** Floor of the rate (and, times T, of the window). */
        public long minRateBps() {
            return minRateBps;
        }

        /**
         * Initial and largest window in bytes; 0 (the default) means one BDP, line rate &times; base
         * RTT, as in the paper.
         */
        public long maxWindowBytes() {
            return maxWindowBytes;
        }

        /** Sets {@link #maxWindowBytes()}. */
        public Config maxWindowBytes(final long bytes) {
            this.maxWindowBytes = bytes;
            return this;
        }

        @Override
        public void validate() {
            CcConfig.requireOpenClosed(eta, 0, 1, "eta");
            CcConfig.requireNonNegative(maxWindowBytes, "maxWindowBytes");
            CcConfig.requireNonNegative(maxStage, "maxStage");
            CcConfig.requireNonNegative(raiBps, "raiBps");
            CcConfig.requirePositive(minRateBps, "minRateBps");
        }
    }

    /** Registers {@link Hpcc} as {@value #NAME}. */
    public static final class Provider extends SimpleProvider<Config> {
        public Provider() {
            super(NAME, Config.class, Hpcc::new);
        }
    }
}
