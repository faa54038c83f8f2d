package org.vrdma.runtime;

/**
 * What can go wrong with frames on a path, all decided by a seeded generator so a faulty run is
 * reproducible. Every probability is in [0, 1]; zero switches a fault off.
 *
 * @param lossProbability independent random loss
 * @param burstEnterProbability Gilbert-Elliott: per frame, probability of moving from the good to
 *     the bad state (p); zero disables burst loss
 * @param burstExitProbability Gilbert-Elliott: per frame, probability of leaving the bad state (r);
 *     the mean burst length is 1/r frames
 * @param burstLossProbability Gilbert-Elliott: loss probability while in the bad state (h)
 * @param duplicateProbability a delivered frame is delivered twice
 * @param reorderProbability a frame is held back by {@code reorderDelayNs} so later ones overtake it
 * @param reorderDelayNs how long a reordered frame is held
 * @param delayNs fixed extra delay for every frame
 * @param jitterNs extra uniform delay in [0, jitterNs] per frame (may reorder frames too)
 */
public record FaultConfig(
        double lossProbability,
        double burstEnterProbability,
        double burstExitProbability,
        double burstLossProbability,
        double duplicateProbability,
        double reorderProbability,
        long reorderDelayNs,
        long delayNs,
        long jitterNs) {

    /** No faults at all. */
    public static final FaultConfig NONE = new FaultConfig(0, 0, 1, 0, 0, 0, 0, 0, 0);

    public FaultConfig {
        probability("lossProbability", lossProbability);
        probability("burstEnterProbability", burstEnterProbability);
        probability("burstExitProbability", burstExitProbability);
        probability("burstLossProbability", burstLossProbability);
        probability("duplicateProbability", duplicateProbability);
        probability("reorderProbability", reorderProbability);
        nonNegative("reorderDelayNs", reorderDelayNs);
        nonNegative("delayNs", delayNs);
        nonNegative("jitterNs", jitterNs);
        if (burstEnterProbability > 0 && burstExitProbability == 0) {
            throw new IllegalArgumentException("burstExitProbability must be positive when bursts are enabled");
        }
        if (reorderProbability > 0 && reorderDelayNs == 0) {
            throw new IllegalArgumentException("reorderDelayNs must be positive when reorderProbability is set");
        }
    }

    public static FaultConfig randomLoss(double p) {
        return NONE.withLoss(p);
    }

    /**
     * Gilbert-Elliott burst loss with the given long-run loss rate and mean burst length (frames),
     * losing every frame while in the bad state.
     */
    public static FaultConfig burstLoss(double meanLossRate, double meanBurstFrames) {
        probability("meanLossRate", meanLossRate);
        if (!(meanBurstFrames >= 1)) {
            throw new IllegalArgumentException("meanBurstFrames must be at least 1: " + meanBurstFrames);
        }
        double r = 1.0 / meanBurstFrames;
        // Stationary share of the bad state is p / (p + r); with h = 1 that is the loss rate.
        double p = meanLossRate >= 1 ? 1 : meanLossRate * r / (1 - meanLossRate);
        return new FaultConfig(0, Math.min(1, p), r, 1.0, 0, 0, 0, 0, 0);
    }

    public FaultConfig withLoss(double p) {
        return new FaultConfig(
                p,
                burstEnterProbability,
                burstExitProbability,
                burstLossProbability,
                duplicateProbability,
                reorderProbability,
                reorderDelayNs,
                delayNs,
                jitterNs);
    }

    public FaultConfig withDuplicates(double p) {
        return new FaultConfig(
                lossProbability,
                burstEnterProbability,
                burstExitProbability,
                burstLossProbability,
                p,
                reorderProbability,
                reorderDelayNs,
                delayNs,
                jitterNs);
    }

    public FaultConfig withReordering(double p, long holdNs) {
        return new FaultConfig(
                lossProbability,
                burstEnterProbability,
                burstExitProbability,
                burstLossProbability,
                duplicateProbability,
                p,
                holdNs,
                delayNs,
                jitterNs);
    }

    public FaultConfig withDelay(long fixedNs, long jitterNs) {
        return new FaultConfig(
                lossProbability,
                burstEnterProbability,
                burstExitProbability,
                burstLossProbability,
                duplicateProbability,
                reorderProbability,
                reorderDelayNs,
                fixedNs,
                jitterNs);
    }

    /** True when frames may be delayed or held, so delivery needs a delay line. */
    public boolean delaysFrames() {
        return delayNs > 0 || jitterNs > 0 || reorderProbability > 0;
    }

    public boolean isNone() {
        return lossProbability == 0 && burstEnterProbability == 0 && duplicateProbability == 0 && !delaysFrames();
    }

    private static void probability(String name, double p) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw new IllegalArgumentException(name + " must be in [0, 1]: " + p);
        }
    }

    private static void nonNegative(String name, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(name + " must not be negative: " + v);
        }
    }
}
