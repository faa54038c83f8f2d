package org.vrdma.vnic.transport;

/**
 * The InfiniBand RNR NAK timer encoding (IBA table 45): a 5-bit code in the AETH of an RNR NAK
 * tells the requester how long to wait before retrying. Code 0 is the longest wait, 655.36 ms.
 */
public final class RnrTimer {
    // In units of 10 µs: 0.01 ms .. 655.36 ms.
    private static final int[] TENS_OF_US = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
        6144, 8192, 12288, 16384, 24576, 32768, 49152
    };

    private RnrTimer() {}

    /** The wait a timer code (0..31) stands for, in nanoseconds. */
    public static long toNanos(final int code) {
        return TENS_OF_US[code & 31] * 10_000L;
    }

    /** The smallest code whose wait is at least {@code nanos} (code 0 for waits beyond 491.52 ms). */
    public static int fromNanos(final long nanos) {
        for (int code = 1; code < 32; code++) {
            if (toNanos(code) >= nanos) {
                return code;
            }
        }
        return 0;
    }
}
