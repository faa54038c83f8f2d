package org.vrdma.vnic.memory;

import io.netty.buffer.ByteBuf;

/**
 * The bytes behind a memory region: a heap or direct buffer here, another process's shared memory in
 * the guest shim. Offsets are relative to the start of the backing; callers have already checked
 * bounds against {@link #capacity()}.
 *
 * <p>Multi-byte values (atomics) are little-endian, as on the x86 hosts RDMA applications run on.
 * Implementations that share memory with a concurrently running application override the atomic
 * methods with truly atomic ones; the defaults are correct for memory only the engine touches.
 */
public interface MemoryRegionBacking {
    /** Size in bytes. */
    long capacity();

    /**
     * The buffer whose index {@code i} is byte {@code i} of this memory, when there is one (so a frame
     * may point at the bytes instead of copying them); null otherwise.
     */
    default ByteBuf buffer() {
        return null;
    }

    /** Appends {@code length} bytes starting at {@code offset} to {@code dst} (advances its writer index). */
    void read(long offset, ByteBuf dst, int length);

    /** Copies {@code length} bytes from {@code src} at absolute index {@code srcIndex} to {@code offset}. */
    void write(long offset, ByteBuf src, int srcIndex, int length);

    /** Copies into {@code dst[dstIndex..dstIndex+length)}. */
    void read(long offset, byte[] dst, int dstIndex, int length);

    /** Copies {@code src[srcIndex..srcIndex+length)} to {@code offset}. */
    void write(long offset, byte[] src, int srcIndex, int length);

    /** Reads the 8-byte little-endian value at {@code offset}. */
    long readLong(long offset);

    /** Writes the 8-byte little-endian value at {@code offset}. */
    void writeLong(long offset, long value);

    /** Compare-and-swap of the 8 bytes at {@code offset}; returns the value seen before. */
    default long compareAndSwap(final long offset, final long compare, final long swap) {
        final long original = readLong(offset);
        if (original == compare) {
            writeLong(offset, swap);
        }
        return original;
    }

    /** Fetch-and-add of the 8 bytes at {@code offset}; returns the value seen before. */
    default long fetchAndAdd(final long offset, final long add) {
        final long original = readLong(offset);
        writeLong(offset, original + add);
        return original;
    }
}
