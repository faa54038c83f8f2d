package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.RoundTracker;
import org.vrdma.cc.SendTimeLog;
import org.vrdma.cc.SimpleProvider;

/**
 * TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM 2015):
 * rate control on the RTT gradient.
 *
 * <p>Once per round trip of data (the first ACK of data sent after the previous update, see {@link
 * RoundTracker}; at low rates that is every ACK, the paper's per-completion update), with the RTT of
 * the packet that triggered that ACK ({@link SendTimeLog}: the receiver's ACK coalescing is not
 * delay, as the paper subtracts a segment's serialisation from its completion time):
 *
 * <ul>
 *   <li>{@code rttDiff = (1 - alpha) rttDiff + alpha (rtt - prevRtt)}, gradient = rttDiff / minRtt;
 *   <li>RTT below Tlow: additive increase by delta;
 *   <li>RTT above Thigh: multiplicative decrease {@code rate * (1 - beta (1 - Thigh/rtt))};
 *   <li>gradient &le; 0: additive increase by delta, by {@code N * delta} (hyperactive increase) once
 *       the gradient has been non-positive for N updates in a row;
 *   <li>gradient &gt; 0: {@code rate * (1 - beta * min(gradient, 1))}: like the Thigh branch, one
 *       update cuts by at most beta (an unbounded {@code 1 - beta * gradient} is zero or negative
 *       from a gradient of 1.25 on, which sends the flow to its floor in one step).
 * </ul>
 *
 * <p>Thresholds follow the path unless configured: minRtt = the flow's base RTT, Tlow and Thigh at
 * the paper's ratios to its minimum RTT (50/20 and 500/20), delta = line rate / 1000 (the paper's 10
 * Mbit/s on 10 Gbit/s NICs). Loss and timeouts leave the rate alone (the paper leaves loss to the
 * NIC); the per-round bookkeeping rewinds so retransmissions do not stall updates.
 */
public final class Timely implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "timely";

    /** Tlow / minRtt of the paper (50 µs / 20 µs). */
    public static final double T_LOW_PER_MIN_RTT = 2.5;

    /** Thigh / minRtt of the paper (500 µs / 20 µs). */
    public static final double T_HIGH_PER_MIN_RTT = 25;

    /** Delta as a fraction of the line rate (the paper's 10 Mbit/s on 10 Gbit/s). */
    public static final double DELTA_PER_LINE_RATE = 1e-3;

    private final Config config;
    private final long lineRateBps;
    private final long minRttNs;
    private final long tLowNs;
    private final long tHighNs;
    private final double deltaBps;
    private final long minRateBps;

    private double rateBps;
    private double rttDiffNs;
    private long prevRttNs = -1;
    private int nonPositiveGradients;
    private final RoundTracker round;
    private final SendTimeLog sendTimes;
    private double lastGradient;
    private long lastRttNs = -1;
    private long cachedRateBps;

    /** Creates the control of one flow, starting at line rate. */
    public Timely(final FlowContext flow, final Config config) {
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.minRttNs = config.minRttNs > 0 ? config.minRttNs : flow.baseRttNs();
        // A derived threshold keeps the paper's 1:10 spacing from a configured one.
        final long lowNs = config.tLowNs > 0 ? config.tLowNs : Math.round(T_LOW_PER_MIN_RTT * minRttNs);
        final long highNs = config.tHighNs > 0 ? config.tHighNs : Math.round(T_HIGH_PER_MIN_RTT * minRttNs);
        this.tLowNs = config.tLowNs == 0 && config.tHighNs > 0 ? Math.min(lowNs, highNs / 10) : lowNs;
        this.tHighNs = config.tHighNs == 0 ? Math.max(highNs, 10 * tLowNs) : highNs;
        this.deltaBps = config.deltaBps > 0 ? config.deltaBps : Math.max(1, DELTA_PER_LINE_RATE * lineRateBps);
        this.minRateBps = Math.min(lineRateBps, config.minRateBps);
        this.round = new RoundTracker(flow.mtuBytes());
        this.sendTimes = new SendTimeLog(flow.mtuBytes());
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
        sendTimes.onSent(nowNs);
    }

    @Override
    public void onAck(final long nowNs, final long ackedBytes, final long rttNs, final boolean ecnEcho) {
        round.onAcked(ackedBytes);
        final long rtt = sendTimes.onAck(nowNs, ackedBytes, rttNs);
        if (rtt < 0) {
            return;
        }
        lastRttNs = rtt;
        if (prevRttNs < 0) {
            prevRttNs = rtt;
            round.startRound();
            return;
        }
        if (round.roundEnded()) {
            onRttSample(rtt);
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
        sendTimes.onLoss();
    }

    /** No rate change, as for {@link #onLoss}; everything unacknowledged will be sent again. */
    @Override
    public void onTimeout(final long nowNs) {
        round.onTimeout();
        sendTimes.onTimeout();
    }

    /**
     * No rate change (the loss is not confirmed), but the send-time log must know the resent
     * packets: otherwise it takes later ACKs for earlier packets and adds pacing gaps to the delay.
     */
    @Override
    public void onResend(final long nowNs) {
        sendTimes.onLoss();
    }

    /** One TIMELY update with a completion's RTT (exposed for tests and per-completion callers). */
    public void onRttSample(final long rttNs) {
        final double newRttDiff = rttNs - prevRttNs;
        prevRttNs = rttNs;
        rttDiffNs = (1 - config.alpha) * rttDiffNs + config.alpha * newRttDiff;
        final double gradient = rttDiffNs / minRttNs;
        lastGradient = gradient;
        // HAI counts completions with a non-positive gradient, whichever branch acts on them.
        nonPositiveGradients = gradient <= 0 ? nonPositiveGradients + 1 : 0;
        if (rttNs < tLowNs) {
            rateBps += deltaBps;
        } else if (rttNs > tHighNs) {
            rateBps *= 1 - config.beta * (1 - (double) tHighNs / rttNs);
            nonPositiveGradients = 0;
        } else if (gradient <= 0) {
            final int n = nonPositiveGradients >= config.haiThreshold ? config.haiThreshold : 1;
            rateBps += n * deltaBps;
        } else {
            rateBps *= 1 - config.beta * Math.min(1, gradient);
        }
        rateBps = Math.max(minRateBps, Math.min(lineRateBps, rateBps));
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

    /** The RTT of the last ACK with a sample, ACK coalescing removed; -1 before the first. */
    public long lastRttNs() {
        return lastRttNs;
    }

    /** Tlow in effect (configured, or the paper's ratio to minRtt). */
    public long tLowNs() {
        return tLowNs;
    }

    /** Thigh in effect (configured, or the paper's ratio to minRtt). */
    public long tHighNs() {
        return tHighNs;
    }

    /** minRtt in effect (configured, or the flow's base RTT). */
    public long minRttNs() {
        return minRttNs;
    }

    /** Delta in effect (configured, or line rate / 1000). */
    public double deltaBps() {
        return deltaBps;
    }

    @Override
    public String toString() {
        return "Timely[rate=" + cachedRateBps + ", rttDiffNs=" + rttDiffNs + ", tLowNs=" + tLowNs + ", tHighNs="
                + tHighNs + ", minRttNs=" + minRttNs + "]";
    }

    /**
     * Parameters of {@link Timely}; defaults from the paper, thresholds and delta scaled to the path
     * (0 = derived from the flow, see {@link Timely}).
     */
    public static final class Config implements CcConfig {
        private double alpha = 0.875;
        private double beta = 0.8;
        private long tLowNs;
        private long tHighNs;
        private long minRttNs;
        private long deltaBps;
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

        /** Below this RTT the rate always increases; 0 = 2.5 &times; minRtt. */
        public long tLowNs() {
            return tLowNs;
        }

        /** Sets {@link #tLowNs()}. */
        public Config tLowNs(final long ns) {
            this.tLowNs = ns;
            return this;
        }

        /** Above this RTT the rate always decreases; 0 = 25 &times; minRtt. */
        public long tHighNs() {
            return tHighNs;
        }

        /** Sets {@link #tHighNs()}. */
        public Config tHighNs(final long ns) {
            this.tHighNs = ns;
            return this;
        }

        /** Normaliser of the gradient: the path's minimum RTT; 0 = the flow's base RTT. */
        public long minRttNs() {
            return minRttNs;
        }

        /** Sets {@link #minRttNs()}. */
        public Config minRttNs(final long ns) {
            this.minRttNs = ns;
            return this;
        }

        /** Additive-increase step (delta); 0 = line rate / 1000. */
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
            CcConfig.require(tLowNs >= 0, "tLowNs", "must be >= 0 (0 = 2.5 x minRtt), was " + tLowNs);
            CcConfig.require(tHighNs >= 0, "tHighNs", "must be >= 0 (0 = 25 x minRtt), was " + tHighNs);
            CcConfig.require(
                    tHighNs == 0 || tHighNs > tLowNs, "tHighNs", "must exceed tLowNs (" + tLowNs + "), was " + tHighNs);
            CcConfig.require(minRttNs >= 0, "minRttNs", "must be >= 0 (0 = the flow's base RTT), was " + minRttNs);
            CcConfig.require(deltaBps >= 0, "deltaBps", "must be >= 0 (0 = line rate / 1000), was " + deltaBps);
            CcConfig.requirePositive(haiThreshold, "haiThreshold");
            CcConfig.requirePositive(minRateBps, "minRateBps");
        }
    }

    /** Registers {@link Timely} as {@value #NAME}. */
    public static final class Provider extends SimpleProvider<Config> {
        public Provider() {
            super(NAME, Config.class, Timely::new);
        }
    }
}
