package org.vrdma.cc;

/**
 * Per-flow token bucket that turns a rate into packet departure times.
 *
 * <p>It keeps the theoretical departure time of the next byte (GCRA) in picoseconds plus a remainder
 * in units of {@code 1/rateBps} ps, so the spacing of packets is exactly {@code bytes * 8 / rate}
 * with no cumulative drift however many packets are sent. A sender that departs within one
 * nanosecond after {@link #earliestDepartureNs} keeps the schedule exact; one that departs later
 * found the link idle and restarts the schedule at its departure (minus any burst credit).
 *
 * <p>{@code burstBytes} is how far the flow may run ahead of its pace after being idle: 0 paces every
 * packet; a burst of B lets B bytes leave back to back before pacing resumes.
 *
 * <p>Rate changes take effect immediately: the part of the last packets' transmission time that has
 * not yet elapsed is rescaled to the new rate.
 */
public final class Pacer {
    /** Largest packet or burst, in bytes, the picosecond arithmetic accepts without overflow. */
    public static final int MAX_BYTES = 1 << 20;

    private static final long PS_PER_NS = 1_000L;
    private static final long PS_PER_S = 1_000_000_000_000L;
    private static final long BIT_PS_PER_BYTE = 8 * PS_PER_S;

    private long rateBps;
    private long burstBytes;
    private long burstPs;
    private long tatPs = Long.MIN_VALUE / 2;
    private long tatRemainder;

    /**
     * @param rateBps initial rate, positive
     * @param burstBytes bytes that may leave back to back beyond the pace, 0 to {@link #MAX_BYTES}
     */
    public Pacer(final long rateBps, final long burstBytes) {
        requireRate(rateBps);
        this.rateBps = rateBps;
        burstBytes(burstBytes);
    }

    /**
     * The earliest time a packet of {@code bytes} may depart. {@code nowNs} if it may go now.
     *
     * @param nowNs current time
     * @param bytes wire size of the packet
     */
    public long earliestDepartureNs(final long nowNs, final int bytes) {
        requireBytes(bytes);
        final long allowedPs = tatPs - burstPs;
        final long allowedNs = Math.ceilDiv(allowedPs, PS_PER_NS);
        return Math.max(nowNs, allowedNs);
    }

    /** Whether a packet of {@code bytes} may depart at {@code nowNs}. */
    public boolean canSend(final long nowNs, final int bytes) {
        return earliestDepartureNs(nowNs, bytes) <= nowNs;
    }

    /** A packet of {@code bytes} departed at {@code nowNs}: charge its transmission time. */
    public void onSent(final long nowNs, final int bytes) {
        requireBytes(bytes);
        final long nowPs = nowNs * PS_PER_NS;
        if (nowPs - PS_PER_NS >= tatPs) {
            // More than a nanosecond behind schedule: the flow was idle, so the schedule restarts now.
            tatPs = nowPs;
            tatRemainder = 0;
        }
        final long bitPs = bytes * BIT_PS_PER_BYTE;
        tatPs += bitPs / rateBps;
        tatRemainder += bitPs % rateBps;
        if (tatRemainder >= rateBps) {
            tatRemainder -= rateBps;
            tatPs++;
        }
    }

    /** Current rate in bits per second. */
    public long rateBps() {
        return rateBps;
    }

    /**
     * Changes the rate from {@code nowNs} on; a no-op if it is unchanged, so callers may set it after
     * every congestion-control event.
     */
    public void rateBps(final long nowNs, final long newRateBps) {
        requireRate(newRateBps);
        if (newRateBps == rateBps) {
            return;
        }
        final long nowPs = nowNs * PS_PER_NS;
        final long owedPs = tatPs - nowPs;
        if (owedPs > 0) {
            tatPs = nowPs + (long) ((double) owedPs * rateBps / newRateBps);
        }
        tatRemainder = 0;
        rateBps = newRateBps;
        burstPs = burstBytes * BIT_PS_PER_BYTE / rateBps;
    }

    /** Bytes that may leave back to back beyond the pace. */
    public long burstBytes() {
        return burstBytes;
    }

    /** Sets the burst size, 0 to {@link #MAX_BYTES}. */
    public void burstBytes(final long burstBytes) {
        if (burstBytes < 0 || burstBytes > MAX_BYTES) {
            throw new IllegalArgumentException("burstBytes must be in [0," + MAX_BYTES + "]: " + burstBytes);
        }
        this.burstBytes = burstBytes;
        this.burstPs = burstBytes * BIT_PS_PER_BYTE / rateBps;
    }

    private static void requireRate(final long rateBps) {
        if (rateBps <= 0) {
            throw new IllegalArgumentException("rateBps must be positive: " + rateBps);
        }
    }

    private static void requireBytes(final int bytes) {
        if (bytes < 0 || bytes > MAX_BYTES) {
            throw new IllegalArgumentException("bytes must be in [0," + MAX_BYTES + "]: " + bytes);
        }
    }

    @Override
    public String toString() {
        return "Pacer[rateBps=" + rateBps + ", burstBytes=" + burstBytes + ", tatPs=" + tatPs + "]";
    }
}
