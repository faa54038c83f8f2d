package org.vrdma.vnic.transport;

/**
 * The transmit gate of one queue pair: a window on packets in flight and a pacer, both fed by a
 * {@link RateWindowSource}. In-flight packets are counted by the transport (sent, neither
 * acknowledged nor selectively acknowledged); the window in packets is the source's window in bytes
 * divided by the path MTU, at least one packet.
 */
public final class TxWindow {
    private final RateWindowSource source;
    private int mtuBytes = 1024;
    private long nextDepartureNs = Long.MIN_VALUE;

    /** A window driven by {@code source}. */
    public TxWindow(final RateWindowSource source) {
        this.source = source;
    }

    /** The source of rate and window. */
    public RateWindowSource source() {
        return source;
    }

    /** Sets the path MTU the window is counted in. */
    public void mtuBytes(final int mtuBytes) {
        this.mtuBytes = mtuBytes;
    }

    /** The window in packets. */
    public int windowPackets() {
        final long w = source.windowBytes();
        if (w == RateWindowSource.UNLIMITED_WINDOW) {
            return Integer.MAX_VALUE;
        }
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, w / mtuBytes));
    }

    /** True if {@code packets} more may leave with {@code inFlightPackets} outstanding. */
    public boolean allows(final int inFlightPackets, final int packets) {
        // A message bigger than the window may still go when nothing is in flight.
        return inFlightPackets == 0 || (long) inFlightPackets + packets <= windowPackets();
    }

    /** Earliest time the pacer lets the next packet leave; {@code nowNs} or earlier means now. */
    public long earliestDepartureNs() {
        return nextDepartureNs;
    }

    /** A packet of {@code wireBytes} left at {@code nowNs}. */
    public void onSent(final long nowNs, final int wireBytes) {
        final long rate = source.rateBps();
        if (rate != RateWindowSource.UNLIMITED_RATE) {
            final long start = Math.max(nowNs, nextDepartureNs);
            nextDepartureNs = start + (long) (wireBytes * 8e9 / rate);
        }
        source.onPacketSent(nowNs, wireBytes);
    }
}
