package org.vrdma.vnic.transport;

/**
 * Retransmission timeout from smoothed RTT samples, after RFC 6298: SRTT and RTTVAR with gains 1/8
 * and 1/4, RTO = SRTT + max(granularity, 4·RTTVAR), clamped to {@code [floor, ceiling]}, doubled on
 * every timeout (exponential back-off) until a new sample arrives. The ceiling comes from the QP's
 * {@code timeout} attribute (4.096 µs · 2^timeout), which hardware would use as its fixed timer.
 */
public final class RtoEstimator {
    private static final long GRANULARITY_NS = 1_000;
    private static final int MAX_BACKOFF_SHIFT = 16;

    private long floorNs;
    private long ceilingNs;
    private long srttNs;
    private long rttvarNs;
    private long baseRtoNs;
    private int backoffShift;
    private boolean hasSample;

    /** An estimator starting at {@code initialRtoNs}, bounded by {@code [floorNs, ceilingNs]}. */
    public RtoEstimator(final long initialRtoNs, final long floorNs, final long ceilingNs) {
        reset(initialRtoNs, floorNs, ceilingNs);
    }

    /** Forgets all samples. */
    public void reset(final long initialRtoNs, final long floorNs, final long ceilingNs) {
        this.floorNs = Math.min(floorNs, ceilingNs);
        this.ceilingNs = ceilingNs;
        this.baseRtoNs = clamp(initialRtoNs);
        this.srttNs = 0;
        this.rttvarNs = 0;
        this.backoffShift = 0;
        this.hasSample = false;
    }

    /** A round-trip sample of a packet that was sent once (Karn's rule is the caller's job). */
    public void onRttSample(final long rttNs) {
        final long r = Math.max(1, rttNs);
        if (!hasSample) {
            srttNs = r;
            rttvarNs = r / 2;
            hasSample = true;
        } else {
            rttvarNs = (3 * rttvarNs + Math.abs(srttNs - r)) / 4;
            srttNs = (7 * srttNs + r) / 8;
        }
        baseRtoNs = clamp(srttNs + Math.max(GRANULARITY_NS, 4 * rttvarNs));
        backoffShift = 0;
    }

    /**
     * Takes over another estimator's smoothed RTT and variation (a hint for an estimator without
     * samples of its own), within this one's bounds; the back-off stays.
     */
    public void adopt(final RtoEstimator other) {
        srttNs = other.srttNs;
        rttvarNs = other.rttvarNs;
        hasSample = other.hasSample;
        baseRtoNs = clamp(srttNs + Math.max(GRANULARITY_NS, 4 * rttvarNs));
    }

    /** The RTO of the samples alone, without back-off or bounds other than the floor and ceiling. */
    public long baseRtoNs() {
        return baseRtoNs;
    }

    /** The timer expired: back off. */
    public void onTimeout() {
        if (backoffShift < MAX_BACKOFF_SHIFT) {
            backoffShift++;
        }
    }

    /** The timeout to arm now, back-off included. */
    public long rtoNs() {
        final long backedOff = baseRtoNs << backoffShift;
        return backedOff < 0 || backedOff > ceilingNs ? ceilingNs : backedOff;
    }

    /** Smoothed RTT, or 0 before the first sample. */
    public long srttNs() {
        return srttNs;
    }

    /** RTT variation, or 0 before the first sample. */
    public long rttvarNs() {
        return rttvarNs;
    }

    public boolean hasSample() {
        return hasSample;
    }

    /** Current back-off exponent. */
    public int backoffShift() {
        return backoffShift;
    }

    /** The ceiling for a QP {@code timeout} code: 4.096 µs · 2^code; code 0 (infinite) → {@code fallbackNs}. */
    public static long ceilingForTimeoutCode(final int code, final long fallbackNs) {
        if (code == 0) {
            return fallbackNs;
        }
        return 4096L << code;
    }

    private long clamp(final long v) {
        return Math.max(floorNs, Math.min(ceilingNs, v));
    }
}
