package org.vrdma.cc;

/**
 * Configuration of one algorithm, bound from JSON by Jackson. Implementations are plain classes with
 * a public no-argument constructor that sets the defaults, private fields named like the JSON keys,
 * and accessors; unknown JSON keys are rejected.
 */
public interface CcConfig {
    /**
     * Checks the values.
     *
     * @throws CcConfigException naming the bad field relative to this object, for example {@code "g"}
     */
    void validate();

    /** Throws a {@link CcConfigException} for {@code field} unless {@code ok}. */
    static void require(final boolean ok, final String field, final String problem) {
        if (!ok) {
            throw new CcConfigException(field, problem);
        }
    }

    /** Requires {@code lo < value <= hi}, the usual constraint of a gain or a fraction. */
    static void requireOpenClosed(final double value, final double lo, final double hi, final String field) {
        require(value > lo && value <= hi, field, "must be in (" + fmt(lo) + "," + fmt(hi) + "], was " + value);
    }

    /** Requires {@code value > 0}. */
    static void requirePositive(final double value, final String field) {
        require(value > 0, field, "must be positive, was " + fmt(value));
    }

    /** Requires {@code value >= 0}. */
    static void requireNonNegative(final double value, final String field) {
        require(value >= 0, field, "must not be negative, was " + fmt(value));
    }

    private static String fmt(final double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }
}
