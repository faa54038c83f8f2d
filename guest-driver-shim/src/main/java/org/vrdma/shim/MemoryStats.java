package org.vrdma.shim;

/**
 * How a vNIC reaches the applications' registered memory, since its control server started.
 *
 * @param zeroCopyRegions regions registered zero-copy: the application's memfd mapped by the vNIC
 * @param copyRegions regions reached with {@code process_vm_readv/writev} (the library did not offer
 *     a memfd: disabled with {@code VRDMA_ZERO_COPY=0}, or memory it cannot re-back)
 * @param refusedMemfds memfds the library offered that the vNIC could not map (the region then
 *     falls back to {@code process_vm_readv/writev}, also counted in {@code copyRegions})
 * @param copyCalls {@code process_vm_readv/writev} system calls made for data transfers
 * @param copyBytes bytes those calls moved
 */
public record MemoryStats(long zeroCopyRegions, long copyRegions, long refusedMemfds, long copyCalls, long copyBytes) {
    /** The live counters, confined to the device thread. */
    static final class Counters {
        long zeroCopyRegions;
        long copyRegions;
        long refusedMemfds;
        long copyCalls;
        long copyBytes;

        MemoryStats snapshot() {
            return new MemoryStats(zeroCopyRegions, copyRegions, refusedMemfds, copyCalls, copyBytes);
        }
    }
}
