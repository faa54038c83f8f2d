package org.vrdma.vnic.transport;

/**
 * One bit per PSN in a sliding window of a power-of-two size, indexed by the PSN's low bits. The
 * owner guarantees that only PSNs within one window are live and clears bits as the window slides.
 */
public final class PsnBitmap {
    private final long[] words;
    private final int mask;

    /** A bitmap for a window of {@code size} PSNs, rounded up to a power of two (at least 64). */
    public PsnBitmap(final int size) {
        final int bits = Math.max(64, Integer.highestOneBit(Math.max(1, size - 1)) << 1);
        this.words = new long[bits >>> 6];
        this.mask = bits - 1;
    }

    /** Window size in PSNs. */
    public int size() {
        return mask + 1;
    }

    public boolean get(final int psn) {
        final int i = psn & mask;
        return (words[i >>> 6] & (1L << i)) != 0;
    }

    public void set(final int psn) {
        final int i = psn & mask;
        words[i >>> 6] |= 1L << i;
    }

    public void clear(final int psn) {
        final int i = psn & mask;
        words[i >>> 6] &= ~(1L << i);
    }

    /** Clears every bit. */
    public void clearAll() {
        java.util.Arrays.fill(words, 0L);
    }
}
