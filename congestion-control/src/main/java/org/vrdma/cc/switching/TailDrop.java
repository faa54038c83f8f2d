package org.vrdma.cc.switching;

/** Tail drop: a packet is admitted only if it fits the buffer whole. */
public final class TailDrop {
    private final long bufferBytes;

    /** @param bufferBytes capacity of the queue, positive */
    public TailDrop(final long bufferBytes) {
        if (bufferBytes <= 0) {
            throw new IllegalArgumentException("bufferBytes must be positive: " + bufferBytes);
        }
        this.bufferBytes = bufferBytes;
    }

    /** Whether a packet of {@code packetBytes} fits behind {@code queueBytes}. */
    public boolean admits(final long queueBytes, final int packetBytes) {
        return admits(bufferBytes, queueBytes, packetBytes);
    }

    /** {@link #admits(long, int)} of a buffer of {@code bufferBytes}. */
    public static boolean admits(final long bufferBytes, final long queueBytes, final int packetBytes) {
        return queueBytes + packetBytes <= bufferBytes;
    }

    /** Capacity of the queue. */
    public long bufferBytes() {
        return bufferBytes;
    }

    @Override
    public String toString() {
        return "TailDrop[bufferBytes=" + bufferBytes + "]";
    }
}
