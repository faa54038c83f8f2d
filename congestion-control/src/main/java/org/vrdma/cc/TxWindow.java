package org.vrdma.cc;

/**
 * Bytes in flight of one flow against its congestion window. One packet may always be in flight,
 * so a window smaller than a packet slows a flow down (through the pacer) but never stalls it.
 */
public final class TxWindow {
    private long windowBytes = CongestionControl.UNLIMITED_WINDOW;
    private long outstandingBytes;

    /** Whether sending {@code bytes} more keeps the flow within its window. */
    public boolean allows(final int bytes) {
        return allows(windowBytes, outstandingBytes, bytes);
    }

    /** Whether {@code bytes} more fit a window of {@code windowBytes} with {@code outstandingBytes}. */
    public static boolean allows(final long windowBytes, final long outstandingBytes, final int bytes) {
        return outstandingBytes <= 0 || outstandingBytes <= windowBytes - bytes;
    }

    /** A packet of {@code bytes} was sent (or re-sent). */
    public void onSent(final int bytes) {
        outstandingBytes += bytes;
    }

    /** {@code bytes} left the network: acknowledged, or declared lost and not to be re-sent as such. */
    public void onAcked(final long bytes) {
        outstandingBytes = Math.max(0, outstandingBytes - bytes);
    }

    /** Sets the bytes in flight, for example to 0 when go-back-N rewinds. */
    public void outstandingBytes(final long bytes) {
        outstandingBytes = Math.max(0, bytes);
    }

    /** Bytes sent and not yet acknowledged. */
    public long outstandingBytes() {
        return outstandingBytes;
    }

    /** The congestion window, or {@link CongestionControl#UNLIMITED_WINDOW}. */
    public long windowBytes() {
        return windowBytes;
    }

    /** Sets the congestion window; positive. */
    public void windowBytes(final long windowBytes) {
        if (windowBytes <= 0) {
            throw new IllegalArgumentException("windowBytes must be positive: " + windowBytes);
        }
        this.windowBytes = windowBytes;
    }

    @Override
    public String toString() {
        return "TxWindow[outstanding=" + outstandingBytes + ", window=" + windowBytes + "]";
    }
}
