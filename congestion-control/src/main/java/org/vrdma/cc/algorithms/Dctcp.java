package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.RoundTracker;
import org.vrdma.cc.SimpleProvider;

/**
 * DCTCP-style ECN window (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257).
 *
 * <ul>
 *   <li>Once per window of data, alpha is updated with the fraction F of acknowledged bytes that
 *       carried ECN-echo: {@code alpha = (1 - g) alpha + g F}.
 *   <li>On the first ECN-echo of a window, {@code cwnd = cwnd (1 - alpha / 2)}; at most once per
 *       window.
 *   <li>Otherwise congestion avoidance: one MTU per window ({@code cwnd += mtu * acked / cwnd}).
 *   <li>Loss halves cwnd once per window; a timeout resets it to one MTU.
 * </ul>
 *
 * The flow starts with its initial window (typically the BDP) and sends at line rate inside it.
 */
public final class Dctcp implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "dctcp";

    private final Config config;
    private final long lineRateBps;
    private final int mtuBytes;
    private final double maxWindowBytes;

    private double cwndBytes;
    private double alpha;
    private final RoundTracker round;
    private long windowEndBytes = -1;
    private long reducedUntilBytes = -1;
    private long windowAckedBytes;
    private long windowMarkedBytes;
    private long cachedWindowBytes;

    /** Creates the control of one flow. */
    public Dctcp(final FlowContext flow, final Config config) {
        this.round = new RoundTracker(flow.mtuBytes());
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.mtuBytes = flow.mtuBytes();
        this.maxWindowBytes = config.maxWindowBytes == 0 ? 4.0 * flow.initialWindowBytes() : config.maxWindowBytes;
        this.cwndBytes = Math.min(maxWindowBytes, Math.max(mtuBytes, flow.initialWindowBytes()));
        this.alpha = config.initialAlpha;
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
        windowAckedBytes += ackedBytes;
        if (ecnEcho) {
            windowMarkedBytes += ackedBytes;
            if (round.ackedBytes() > reducedUntilBytes) {
                cwndBytes *= 1 - alpha / 2;
                reducedUntilBytes = round.nextSequenceBytes();
            }
        } else {
            cwndBytes += (double) mtuBytes * ackedBytes / cwndBytes;
        }
        if (windowEndBytes < 0) {
            // An ACK opens an observation window: it ends when the data in flight now is acknowledged.
            windowEndBytes = round.nextSequenceBytes();
        }
        if (round.ackedBytes() >= windowEndBytes && windowAckedBytes > 0) {
            final double fraction = (double) windowMarkedBytes / windowAckedBytes;
            alpha = (1 - config.g) * alpha + config.g * fraction;
            windowAckedBytes = 0;
            windowMarkedBytes = 0;
            windowEndBytes = -1;
        }
        publish();
    }

    @Override
    public void onLoss(final long nowNs, final long lostBytes) {
        round.onLost(lostBytes);
        if (round.ackedBytes() > reducedUntilBytes) {
            cwndBytes /= 2;
            reducedUntilBytes = round.nextSequenceBytes();
            publish();
        }
    }

    @Override
    public void onTimeout(final long nowNs) {
        round.onTimeout();
        cwndBytes = mtuBytes;
        reducedUntilBytes = round.nextSequenceBytes();
        publish();
    }

    @Override
    public long rateBps() {
        return lineRateBps;
    }

    @Override
    public long windowBytes() {
        return cachedWindowBytes;
    }

    /** The estimate of the fraction of marked bytes. */
    public double alpha() {
        return alpha;
    }

    private void publish() {
        cwndBytes = Math.max(mtuBytes, Math.min(maxWindowBytes, cwndBytes));
        cachedWindowBytes = (long) cwndBytes;
    }

    @Override
    public String toString() {
        return "Dctcp[cwnd=" + cachedWindowBytes + ", alpha=" + alpha + "]";
    }

    /** Parameters of {@link Dctcp}; defaults from the paper and RFC 8257. */
    public static final class Config implements CcConfig {
        private double g = 1.0 / 16;
        private double initialAlpha = 1.0;
        private long maxWindowBytes;

        /** EWMA gain of alpha. */
        public double g() {
            return g;
        }

        /** Sets {@link #g()}. */
        public Config g(final double g) {
            this.g = g;
            return this;
        }

        /** alpha before any feedback; 1 is the conservative choice of RFC 8257. */
        public double initialAlpha() {
            return initialAlpha;
        }

        /** Sets {@link #initialAlpha()}. */
        public Config initialAlpha(final double alpha) {
            this.initialAlpha = alpha;
            return this;
        }

        /** Ceiling of cwnd; 0 (default) means four times the initial window. */
        public long maxWindowBytes() {
            return maxWindowBytes;
        }

        @Override
        public void validate() {
            CcConfig.requireOpenClosed(g, 0, 1, "g");
            CcConfig.require(
                    initialAlpha >= 0 && initialAlpha <= 1, "initialAlpha", "must be in [0,1], was " + initialAlpha);
            CcConfig.requireNonNegative(maxWindowBytes, "maxWindowBytes");
        }
    }

    /** Registers {@link Dctcp} as {@value #NAME}. */
    public static final class Provider extends SimpleProvider<Config> {
        public Provider() {
            super(NAME, Config.class, Dctcp::new);
        }
    }
}
