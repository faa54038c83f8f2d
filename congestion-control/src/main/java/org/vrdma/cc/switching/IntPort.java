package org.vrdma.cc.switching;

import org.vrdma.cc.IntTelemetry;

/**
 * The INT view of one egress port: its link rate and cumulative transmitted-bytes counter, and the
 * stamping of a hop record into a packet's {@link IntTelemetry} as the packet leaves (HPCC's INT
 * header fields: qlen, txBytes, ts, B).
 */
public final class IntPort {
    private final long linkRateBps;
    private long txBytes;

    /** @param linkRateBps rate of the egress link, positive */
    public IntPort(final long linkRateBps) {
        if (linkRateBps <= 0) {
            throw new IllegalArgumentException("linkRateBps must be positive: " + linkRateBps);
        }
        this.linkRateBps = linkRateBps;
    }

    /** A packet of {@code bytes} was transmitted by this port. */
    public void onTransmit(final int bytes) {
        txBytes += bytes;
    }

    /**
     * Appends this port's record to {@code telemetry} for a packet departing at {@code nowNs} with
     * {@code queueBytes} left in the queue.
     *
     * @return false if the packet already carries {@link IntTelemetry#MAX_HOPS} records
     */
    public boolean stamp(final IntTelemetry telemetry, final long nowNs, final long queueBytes) {
        return telemetry.addHop(queueBytes, txBytes, nowNs, linkRateBps);
    }

    /** Cumulative bytes transmitted. */
    public long txBytes() {
        return txBytes;
    }

    /** Link rate of the port. */
    public long linkRateBps() {
        return linkRateBps;
    }
}
