package org.vrdma.cc;

/**
 * What an algorithm knows about its flow when it is created.
 *
 * @param lineRateBps rate of the sender's link; the ceiling of every algorithm's rate
 * @param baseRttNs round-trip time of the empty path
 * @param mtuBytes wire size of a full data packet
 * @param initialWindowBytes window a window-based algorithm starts with, usually the
 *     bandwidth-delay product ({@link #bdpBytes(long, long)})
 * @param seed seed for any randomness of the algorithm, so runs are reproducible
 */
public record FlowContext(long lineRateBps, long baseRttNs, int mtuBytes, long initialWindowBytes, long seed) {
    /** Validates the values. */
    public FlowContext {
        if (lineRateBps <= 0) {
            throw new IllegalArgumentException("lineRateBps must be positive: " + lineRateBps);
        }
        if (baseRttNs <= 0) {
            throw new IllegalArgumentException("baseRttNs must be positive: " + baseRttNs);
        }
        if (mtuBytes <= 0) {
            throw new IllegalArgumentException("mtuBytes must be positive: " + mtuBytes);
        }
        if (initialWindowBytes <= 0) {
            throw new IllegalArgumentException("initialWindowBytes must be positive: " + initialWindowBytes);
        }
    }

    /** A context whose initial window is the bandwidth-delay product (at least one MTU). */
    public static FlowContext of(final long lineRateBps, final long baseRttNs, final int mtuBytes, final long seed) {
        return new FlowContext(
                lineRateBps, baseRttNs, mtuBytes, Math.max(mtuBytes, bdpBytes(lineRateBps, baseRttNs)), seed);
    }

    /** Bytes that {@code rateBps} moves in {@code durationNs}. */
    public static long bdpBytes(final long rateBps, final long durationNs) {
        return (long) ((double) rateBps * durationNs / 8e9);
    }

    /** This flow's bandwidth-delay product: line rate times base RTT. */
    public long bdpBytes() {
        return bdpBytes(lineRateBps, baseRttNs);
    }
}
