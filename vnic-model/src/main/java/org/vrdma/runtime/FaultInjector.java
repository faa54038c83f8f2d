package org.vrdma.runtime;

import java.util.random.RandomGenerator;

/**
 * Decides, frame by frame, what a {@link FaultConfig} does to it: drop it (random or burst loss),
 * delay it (fixed delay, jitter, reordering hold) and whether to deliver it twice. Lives in
 * production code so tests and experiments switch faults on with a seed, Aeron-style.
 *
 * <p>Usage: call {@link #judge()} once per frame; if it returns {@link #DROP} release the frame,
 * otherwise deliver it after {@link #delayNs()} and, when {@link #DUPLICATE} is set, a copy after
 * {@link #duplicateDelayNs()}. Allocation-free; confined to one thread.
 */
public final class FaultInjector {
    /** Deliver the frame (possibly delayed). */
    public static final int DELIVER = 0;
    /** Drop the frame. */
    public static final int DROP = 1;
    /** Deliver the frame and a copy of it. */
    public static final int DUPLICATE = 2;

    private final RandomGenerator random;
    private volatile FaultConfig config;
    private boolean burstState;
    private long delayNs;
    private long duplicateDelayNs;

    private long framesJudged;
    private long randomDrops;
    private long burstDrops;
    private long duplicates;
    private long reordered;

    public FaultInjector(FaultConfig config, RandomGenerator random) {
        this.config = config;
        this.random = random;
    }

    /** Replaces the configuration; takes effect from the next frame. */
    public void config(FaultConfig config) {
        this.config = config;
    }

    public FaultConfig config() {
        return config;
    }

    /** Decides the next frame's fate: {@link #DELIVER}, {@link #DROP} or {@link #DUPLICATE}. */
    public int judge() {
        FaultConfig c = config;
        framesJudged++;
        if (c.isNone()) {
            delayNs = 0;
            return DELIVER;
        }
        if (c.burstEnterProbability() > 0) {
            // Gilbert-Elliott: the state changes per frame, then the state's loss applies.
            burstState = burstState
                    ? random.nextDouble() >= c.burstExitProbability()
                    : random.nextDouble() < c.burstEnterProbability();
            if (burstState && c.burstLossProbability() > 0 && random.nextDouble() < c.burstLossProbability()) {
                burstDrops++;
                return DROP;
            }
        }
        if (c.lossProbability() > 0 && random.nextDouble() < c.lossProbability()) {
            randomDrops++;
            return DROP;
        }
        delayNs = nextDelay(c);
        if (c.reorderProbability() > 0 && random.nextDouble() < c.reorderProbability()) {
            delayNs += c.reorderDelayNs();
            reordered++;
        }
        if (c.duplicateProbability() > 0 && random.nextDouble() < c.duplicateProbability()) {
            duplicates++;
            duplicateDelayNs = nextDelay(c);
            return DUPLICATE;
        }
        return DELIVER;
    }

    private long nextDelay(FaultConfig c) {
        long jitter = c.jitterNs() > 0 ? random.nextLong(c.jitterNs() + 1) : 0;
        return c.delayNs() + jitter;
    }

    /** Extra delay of the frame judged last. */
    public long delayNs() {
        return delayNs;
    }

    /** Extra delay of the copy, when the last verdict was {@link #DUPLICATE}. */
    public long duplicateDelayNs() {
        return duplicateDelayNs;
    }

    public long framesJudged() {
        return framesJudged;
    }

    public long randomDrops() {
        return randomDrops;
    }

    public long burstDrops() {
        return burstDrops;
    }

    public long duplicates() {
        return duplicates;
    }

    public long reordered() {
        return reordered;
    }
}
