package org.vrdma.vnic.memory;

import io.netty.buffer.ByteBuf;

/**
 * A memory region backing that models only the region's size, for simulations whose results do not
 * depend on the bytes carried: a read appends {@code length} bytes to the frame without writing them
 * (the frame's length is right, its payload bytes are whatever the buffer held), a write is
 * discarded, and 8-byte values read as 0. Packets then cost no payload copy on either side, and
 * their payload memory is never touched. Use with a codec that neither computes nor checks the
 * ICRC ({@code RocePacketCodec.withoutIcrc()}), since the payload bytes are undefined.
 */
public final class LengthOnlyMemory implements MemoryRegionBacking {
    private final long capacity;

    public LengthOnlyMemory(final long capacityBytes) {
        if (capacityBytes < 0) {
            throw new IllegalArgumentException("capacity " + capacityBytes);
        }
        this.capacity = capacityBytes;
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public void read(final long offset, final ByteBuf dst, final int length) {
        dst.ensureWritable(length);
        dst.writerIndex(dst.writerIndex() + length);
    }

    @Override
    public void write(final long offset, final ByteBuf src, final int srcIndex, final int length) {
        // Nothing is kept.
    }

    @Override
    public void read(final long offset, final byte[] dst, final int dstIndex, final int length) {
        java.util.Arrays.fill(dst, dstIndex, dstIndex + length, (byte) 0);
    }

    @Override
    public void write(final long offset, final byte[] src, final int srcIndex, final int length) {
        // Nothing is kept.
    }

    @Override
    public long readLong(final long offset) {
        return 0;
    }

    @Override
    public void writeLong(final long offset, final long value) {
        // Nothing is kept.
    }
}
