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
    /** The rate {@link #nextDepartureNs} was paced at. */
    private long pacedRateBps = RateWindowSource.UNLIMITED_RATE;

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

    /**
     * Earliest time the pacer lets the next packet leave; {@code nowNs} or earlier means now. A rate
     * change takes effect at once, as in the congestion-control module's pacer: the part of the last
     * packet's gap still ahead is rescaled to the new rate. A gap paced at a rate congestion control
     * has since raised otherwise held the flow back, at 7 Mbit/s one 4 KiB packet's gap is 4.5 ms,
     * long after the rate was back at line rate.
     */
    public long earliestDepartureNs(final long nowNs) {
        final long rate = source.rateBps();
        if (rate != pacedRateBps) {
            if (nextDepartureNs > nowNs) {
                nextDepartureNs =
                        rate == RateWindowSource.UNLIMITED_RATE || pacedRateBps == RateWindowSource.UNLIMITED_RATE
                                ? nowNs
                                : nowNs + (long) ((double) (nextDepartureNs - nowNs) * pacedRateBps / rate);
            }
            pacedRateBps = rate;
        }
        return nextDepartureNs;
    }

    /** A packet of {@code wireBytes} left at {@code nowNs}. */
    public void onSent(final long nowNs, final int wireBytes) {
        final long rate = source.rateBps();
        if (rate != RateWindowSource.UNLIMITED_RATE) {
            final long start = Math.max(nowNs, earliestDepartureNs(nowNs));
            nextDepartureNs = start + (long) (wireBytes * 8e9 / rate);
        }
        pacedRateBps = rate;
        source.onPacketSent(nowNs, wireBytes);
    }
}
