package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.CongestionControlProvider;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.RoundTracker;

/**
 * TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015):
 * rate control on the RTT gradient.
 *
 * <p>Once per round trip of data (the first ACK of data sent after the previous update, see {@link
 * RoundTracker}), with the RTT sample of that ACK:
 *
 * <ul>
 *   <li>{@code rttDiff = (1 - alpha) rttDiff + alpha (rtt - prevRtt)}, gradient = rttDiff / minRtt;
 *   <li>RTT below Tlow: additive increase by delta;
 *   <li>RTT above Thigh: multiplicative decrease {@code rate * (1 - beta (1 - Thigh/rtt))};
 *   <li>gradient &le; 0: additive increase by delta, by {@code N * delta} (hyperactive increase) after
 *       N consecutive non-positive gradients;
 *   <li>gradient &gt; 0: {@code rate * (1 - beta * gradient)}.
 * </ul>
 */
public final class Timely implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "timely";

    private final Config config;
    private final long lineRateBps;

    private double rateBps;
    private double rttDiffNs;
    private long prevRttNs = -1;
    private int nonPositiveGradients;
    private final RoundTracker round = new RoundTracker();
    private double lastGradient;
    private long cachedRateBps;

    /** Creates the control of one flow, starting at line rate. */
    public Timely(final FlowContext flow, final Config config) {
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.rateBps = lineRateBps;
        this.cachedRateBps = lineRateBps;
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
        if (rttNs < 0) {
            return;
        }
        if (prevRttNs < 0) {
            prevRttNs = rttNs;
            round.startRound();
            return;
        }
        if (round.roundEnded()) {
            onRttSample(rttNs);
            round.startRound();
        }
    }

    /**
     * No rate change: TIMELY reacts to delay only (the paper leaves loss to the NIC's transport).
     * The round bookkeeping rewinds, so the retransmissions do not delay the next update.
     */
    @Override
    public void onLoss(final long nowNs, final long lostBytes) {
        round.onLost(lostBytes);
    }

    /** No rate change, as for {@link #onLoss}; everything unacknowledged will be sent again. */
    @Override
    public void onTimeout(final long nowNs) {
        round.onTimeout();
    }

    /** One TIMELY update with a completion's RTT (exposed for tests and per-completion callers). */
    public void onRttSample(final long rttNs) {
        final double newRttDiff = rttNs - prevRttNs;
        prevRttNs = rttNs;
        rttDiffNs = (1 - config.alpha) * rttDiffNs + config.alpha * newRttDiff;
        final double gradient = rttDiffNs / config.minRttNs;
        lastGradient = gradient;
        if (rttNs < config.tLowNs) {
            rateBps += config.deltaBps;
            nonPositiveGradients = 0;
        } else if (rttNs > config.tHighNs) {
            rateBps *= 1 - config.beta * (1 - (double) config.tHighNs / rttNs);
            nonPositiveGradients = 0;
        } else if (gradient <= 0) {
            nonPositiveGradients++;
            final int n = nonPositiveGradients >= config.haiThreshold ? config.haiThreshold : 1;
            rateBps += (double) n * config.deltaBps;
        } else {
            rateBps *= Math.max(0, 1 - config.beta * gradient);
            nonPositiveGradients = 0;
        }
        rateBps = Math.max(config.minRateBps, Math.min(lineRateBps, rateBps));
        cachedRateBps = Math.max(1, Math.min(lineRateBps, (long) rateBps));
    }

    @Override
    public long rateBps() {
        return cachedRateBps;
    }

    /** The normalised RTT gradient of the last update. */
    public double gradient() {
        return lastGradient;
    }

    @Override
    public String toString() {
        return "Timely[rate=" + cachedRateBps + ", rttDiffNs=" + rttDiffNs + "]";
    }

    /** Parameters of {@link Timely}; defaults from the paper. */
    public static final class Config implements CcConfig {
        private double alpha = 0.875;
        private double beta = 0.8;
        private long tLowNs = 50_000;
        private long tHighNs = 500_000;
        private long minRttNs = 20_000;
        private long deltaBps = 10_000_000;
        private int haiThreshold = 5;
        private long minRateBps = 100_000_000;

        /** EWMA weight of the newest RTT difference. */
        public double alpha() {
            return alpha;
        }

        /** Multiplicative-decrease factor. */
        public double beta() {
            return beta;
        }

        /** Below this RTT the rate always increases. */
        public long tLowNs() {
            return tLowNs;
        }

        /** Sets {@link #tLowNs()}. */
        public Config tLowNs(final long ns) {
            this.tLowNs = ns;
            return this;
        }

        /** Above this RTT the rate always decreases. */
        public long tHighNs() {
            return tHighNs;
        }

        /** Sets {@link #tHighNs()}. */
        public Config tHighNs(final long ns) {
            this.tHighNs = ns;
            return this;
        }

        /** Normaliser of the gradient: the path's minimum RTT. */
        public long minRttNs() {
            return minRttNs;
        }

        /** Sets {@link #minRttNs()}. */
        public Config minRttNs(final long ns) {
            this.minRttNs = ns;
            return this;
        }

        /** Additive-increase step (delta). */
        public long deltaBps() {
            return deltaBps;
        }

        /** Sets {@link #deltaBps()}. */
        public Config deltaBps(final long bps) {
            this.deltaBps = bps;
            return this;
        }

        /** Consecutive non-positive gradients before hyperactive increase (N). */
        public int haiThreshold() {
            return haiThreshold;
        }

        /** Floor of the rate. */
        public long minRateBps() {
            return minRateBps;
        }

        @Override
        public void validate() {
            CcConfig.requireOpenClosed(alpha, 0, 1, "alpha");
            CcConfig.requireOpenClosed(beta, 0, 1, "beta");
            CcConfig.requirePositive(tLowNs, "tLowNs");
            CcConfig.require(tHighNs > tLowNs, "tHighNs", "must exceed tLowNs (" + tLowNs + "), was " + tHighNs);
            CcConfig.requirePositive(minRttNs, "minRttNs");
            CcConfig.requirePositive(deltaBps, "deltaBps");
            CcConfig.requirePositive(haiThreshold, "haiThreshold");
            CcConfig.requirePositive(minRateBps, "minRateBps");
        }
    }

    /** Registers {@link Timely} as {@value #NAME}. */
    public static final class Provider implements CongestionControlProvider<Config> {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Class<Config> configType() {
            return Config.class;
        }

        @Override
        public CongestionControl create(final FlowContext flow, final Config config) {
            return new Timely(flow, config);
        }
    }
}
