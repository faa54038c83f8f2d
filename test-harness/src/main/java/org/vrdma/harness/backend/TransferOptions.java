package org.vrdma.harness.backend;

import java.time.Duration;

/**
 * One perftest-style transfer between two lab hosts, as {@code ./vrdma host --client} runs it.
 *
 * @param test {@code write_bw}, {@code read_bw} or {@code send_lat}
 * @param sizeBytes message size
 * @param iterations messages (bandwidth) or round trips (latency)
 * @param bufferBytes registered buffer; with {@code verify}, the bytes one checked round covers
 * @param verify check every byte at the receiver
 * @param lossRate random loss injected on both hosts' uplinks, 0..1
 * @param seed seed of the verified data pattern
 * @param timeout how long the test may take once connected
 */
public record TransferOptions(
        String test,
        int sizeBytes,
        long iterations,
        int bufferBytes,
        boolean verify,
        double lossRate,
        long seed,
        Duration timeout) {
    /** {@code totalBytes} of verified RDMA WRITEs in 64 KiB messages, checked in rounds of at most 8 MiB. */
    public static TransferOptions verifiedWrite(long totalBytes) {
        int size = (int) Math.min(64 << 10, totalBytes);
        if (totalBytes % size != 0) {
            throw new IllegalArgumentException("total bytes must be a multiple of " + size + ": " + totalBytes);
        }
        int buffer = (int) Math.min(8 << 20, totalBytes);
        return new TransferOptions("write_bw", size, totalBytes / size, buffer, true, 0, 1, Duration.ofSeconds(120));
    }

    public TransferOptions withLoss(double rate) {
        return new TransferOptions(test, sizeBytes, iterations, bufferBytes, verify, rate, seed, timeout);
    }

    public TransferOptions withSeed(long newSeed) {
        return new TransferOptions(test, sizeBytes, iterations, bufferBytes, verify, lossRate, newSeed, timeout);
    }

    /** Bytes the transfer moves. */
    public long totalBytes() {
        return sizeBytes * iterations;
    }
}
