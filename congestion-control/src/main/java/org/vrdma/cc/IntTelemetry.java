package org.vrdma.cc;

/**
 * Per-hop in-band network telemetry (INT) of one packet, as HPCC uses it: for every egress port on
 * the path, the queue length, the port's cumulative transmitted-bytes counter, the time the record
 * was stamped and the link rate.
 *
 * <p>A reusable, allocation-free holder: callers keep one per flow (or per thread), {@link #reset()}
 * it and fill it for every ACK.
 */
public final class IntTelemetry {
    /** Maximum number of hop records, as in the HPCC INT header. */
    public static final int MAX_HOPS = 8;

    private final long[] queueBytes = new long[MAX_HOPS];
    private final long[] txBytes = new long[MAX_HOPS];
    private final long[] timestampNs = new long[MAX_HOPS];
    private final long[] linkRateBps = new long[MAX_HOPS];
    private int hopCount;

    /** Removes all hop records. */
    public IntTelemetry reset() {
        hopCount = 0;
        return this;
    }

    /**
     * Appends the record of the next hop.
     *
     * @return false, leaving the holder unchanged, if it already holds {@link #MAX_HOPS} records
     */
    public boolean addHop(long queueBytes, long txBytes, long timestampNs, long linkRateBps) {
        if (hopCount == MAX_HOPS) {
            return false;
        }
        final int i = hopCount++;
        this.queueBytes[i] = queueBytes;
        this.txBytes[i] = txBytes;
        this.timestampNs[i] = timestampNs;
        this.linkRateBps[i] = linkRateBps;
        return true;
    }

    /** Copies all records of {@code other} into this holder. */
    public IntTelemetry copyFrom(final IntTelemetry other) {
        hopCount = other.hopCount;
        System.arraycopy(other.queueBytes, 0, queueBytes, 0, hopCount);
        System.arraycopy(other.txBytes, 0, txBytes, 0, hopCount);
        System.arraycopy(other.timestampNs, 0, timestampNs, 0, hopCount);
        System.arraycopy(other.linkRateBps, 0, linkRateBps, 0, hopCount);
        return this;
    }

    /** Number of hop records, 0 to {@link #MAX_HOPS}. */
    public int hopCount() {
        return hopCount;
    }

    /** Egress queue length at hop {@code hop} when the packet left it, in bytes. */
    public long queueBytes(final int hop) {
        return queueBytes[check(hop)];
    }

    /** Cumulative bytes transmitted by hop {@code hop}'s egress port. */
    public long txBytes(final int hop) {
        return txBytes[check(hop)];
    }

    /** Time hop {@code hop} stamped its record. */
    public long timestampNs(final int hop) {
        return timestampNs[check(hop)];
    }

    /** Line rate of hop {@code hop}'s egress link. */
    public long linkRateBps(final int hop) {
        return linkRateBps[check(hop)];
    }

    private int check(final int hop) {
        if (hop < 0 || hop >= hopCount) {
            throw new IndexOutOfBoundsException("hop " + hop + " of " + hopCount);
        }
        return hop;
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("IntTelemetry[");
        for (int i = 0; i < hopCount; i++) {
            sb.append(i == 0 ? "" : ", ")
                    .append("{q=")
                    .append(queueBytes[i])
                    .append(" tx=")
                    .append(txBytes[i])
                    .append(" ts=")
                    .append(timestampNs[i])
                    .append(" rate=")
                    .append(linkRateBps[i])
                    .append('}');
        }
        return sb.append(']').toString();
    }
}
