package org.vrdma.cc.switching;

import java.util.random.RandomGenerator;

/**
 * RED-style ECN marking on the instantaneous queue length, as RoCE switches configure it for DCQCN:
 * no marks up to Kmin, probability rising linearly to Pmax at Kmax, every packet above Kmax. With
 * {@code Kmin == Kmax} it is DCTCP's step marking at K.
 *
 * <p>Randomness comes from the caller's seeded generator, so a run is reproducible.
 */
public final class RedEcnMarker {
    private final long kMinBytes;
    private final long kMaxBytes;
    private final double pMax;

    /**
     * @param kMinBytes queue length up to which nothing is marked
     * @param kMaxBytes queue length above which everything is marked; at least {@code kMinBytes}
     * @param pMax marking probability at Kmax, in [0, 1]
     */
    public RedEcnMarker(final long kMinBytes, final long kMaxBytes, final double pMax) {
        if (kMinBytes < 0 || kMaxBytes < kMinBytes) {
            throw new IllegalArgumentException("need 0 <= kMinBytes <= kMaxBytes: " + kMinBytes + ", " + kMaxBytes);
        }
        if (!(pMax >= 0 && pMax <= 1)) {
            throw new IllegalArgumentException("pMax must be in [0,1]: " + pMax);
        }
        this.kMinBytes = kMinBytes;
        this.kMaxBytes = kMaxBytes;
        this.pMax = pMax;
    }

    /** DCTCP's step marking: mark every packet that finds more than {@code kBytes} queued. */
    public static RedEcnMarker step(final long kBytes) {
        return new RedEcnMarker(kBytes, kBytes, 1.0);
    }

    /** Marking probability for a packet that finds {@code queueBytes} queued. */
    public double markProbability(final long queueBytes) {
        if (queueBytes <= kMinBytes) {
            return 0;
        }
        if (queueBytes > kMaxBytes) {
            return 1;
        }
        return pMax * (queueBytes - kMinBytes) / (kMaxBytes - kMinBytes);
    }

    /** Whether a packet that finds {@code queueBytes} queued gets the CE mark. */
    public boolean shouldMark(final long queueBytes, final RandomGenerator random) {
        final double p = markProbability(queueBytes);
        return p >= 1 || (p > 0 && random.nextDouble() < p);
    }

    /** Kmin in bytes. */
    public long kMinBytes() {
        return kMinBytes;
    }

    /** Kmax in bytes. */
    public long kMaxBytes() {
        return kMaxBytes;
    }

    /** Pmax. */
    public double pMax() {
        return pMax;
    }

    @Override
    public String toString() {
        return "RedEcnMarker[kMin=" + kMinBytes + ", kMax=" + kMaxBytes + ", pMax=" + pMax + "]";
    }
}
