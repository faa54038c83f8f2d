package org.vrdma.vnic.transport;

/**
 * A constant rate and window: what a queue pair uses without congestion control. CNPs and losses
 * are ignored (the transport still counts them).
 */
public final class StaticRateWindow implements RateWindowSource {
    private final long rateBps;
    private final long windowBytes;

    /** A source with fixed {@code rateBps} and {@code windowBytes}. */
    public StaticRateWindow(final long rateBps, final long windowBytes) {
        if (rateBps <= 0 || windowBytes <= 0) {
            throw new IllegalArgumentException("rate and window must be positive");
        }
        this.rateBps = rateBps;
        this.windowBytes = windowBytes;
    }

    @Override
    public long rateBps() {
        return rateBps;
    }

    @Override
    public long windowBytes() {
        return windowBytes;
    }
}
