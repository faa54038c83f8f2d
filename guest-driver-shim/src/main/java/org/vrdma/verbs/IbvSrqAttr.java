package org.vrdma.verbs;

/**
 * Attributes of a shared receive queue ({@code struct ibv_srq_attr}): what {@link IbvSrq#query}
 * reports and {@link IbvSrq#modify} changes.
 */
public final class IbvSrqAttr {
    /** {@code IBV_SRQ_MAX_WR}: resize to {@link #maxWr}. */
    public static final int MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}: arm the limit event at {@link #srqLimit} (0 disarms). */
    public static final int LIMIT = 1 << 1;

    /** Receives the queue holds at most. */
    public int maxWr;
    /** Scatter/gather elements per receive (not modifiable). */
    public int maxSge;
    /** The armed limit, 0 when disarmed. */
    public int srqLimit;

    @Override
    public String toString() {
        return "IbvSrqAttr{maxWr=" + maxWr + ", maxSge=" + maxSge + ", srqLimit=" + srqLimit + '}';
    }
}
