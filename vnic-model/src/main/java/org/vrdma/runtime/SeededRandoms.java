package org.vrdma.runtime;

import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * Independent, reproducible random streams derived from one seed. Each component asks for its own
 * stream by a stable name ("link:h1->h2", "qp:17"), so adding a component or changing the order in
 * which components draw numbers does not disturb the others: the same seed gives the same run.
 */
public final class SeededRandoms {
    private final long seed;

    public SeededRandoms(long seed) {
        this.seed = seed;
    }

    public long seed() {
        return seed;
    }

    /** A new generator for the named stream; the same (seed, name) always gives the same sequence. */
    public RandomGenerator stream(String name) {
        return new SplittableRandom(mix64(seed ^ mix64(stableHash(name))));
    }

    /** A stream derived from a name and an index, e.g. one per flow. */
    public RandomGenerator stream(String name, long index) {
        return new SplittableRandom(mix64(seed ^ mix64(stableHash(name) + 0x9E37_79B9_7F4A_7C15L * (index + 1))));
    }

    private static long stableHash(String name) {
        // String.hashCode is specified by the JLS, so it is stable across JVMs and runs.
        long h = 1125899906842597L;
        for (int i = 0; i < name.length(); i++) {
            h = 31 * h + name.charAt(i);
        }
        return h;
    }

    /** Stafford's variant 13 of the MurmurHash3 finaliser. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
