package org.vrdma.vnic.transport;

/**
 * Packet sequence number arithmetic: 24-bit values that wrap, compared within a window of 2^23 as
 * the InfiniBand spec requires (a PSN is "before" another if it is less than half the space behind).
 */
public final class Psn {
    /** Number of distinct PSNs. */
    public static final int SPACE = 1 << 24;
    /** Mask to 24 bits. */
    public static final int MASK = SPACE - 1;
    /** Half the space: the comparison window. */
    public static final int HALF = 1 << 23;

    private Psn() {}

    /** {@code psn + n} modulo 2^24 ({@code n} may be negative). */
    public static int add(final int psn, final int n) {
        return (psn + n) & MASK;
    }

    /** {@code psn + 1} modulo 2^24. */
    public static int next(final int psn) {
        return (psn + 1) & MASK;
    }

    /** {@code psn - 1} modulo 2^24. */
    public static int prev(final int psn) {
        return (psn - 1) & MASK;
    }

    /** Signed distance {@code a - b}, in {@code [-2^23, 2^23)}. */
    public static int diff(final int a, final int b) {
        return ((a - b) << 8) >> 8;
    }

    /** {@code a} before {@code b}. */
    public static boolean lt(final int a, final int b) {
        return diff(a, b) < 0;
    }

    /** {@code a} before or equal to {@code b}. */
    public static boolean le(final int a, final int b) {
        return diff(a, b) <= 0;
    }

    /** {@code a} after {@code b}. */
    public static boolean gt(final int a, final int b) {
        return diff(a, b) > 0;
    }

    /** {@code a} after or equal to {@code b}. */
    public static boolean ge(final int a, final int b) {
        return diff(a, b) >= 0;
    }

    /** The later of two PSNs. */
    public static int max(final int a, final int b) {
        return diff(a, b) >= 0 ? a : b;
    }

    /** The earlier of two PSNs. */
    public static int min(final int a, final int b) {
        return diff(a, b) <= 0 ? a : b;
    }

    /** True if {@code psn} lies in {@code [first, first + count)}. */
    public static boolean inRange(final int psn, final int first, final int count) {
        final int d = (psn - first) & MASK;
        return d < count;
    }

    /** True if {@code psn} is a valid 24-bit value. */
    public static boolean isValid(final int psn) {
        return (psn & ~MASK) == 0;
    }
}
