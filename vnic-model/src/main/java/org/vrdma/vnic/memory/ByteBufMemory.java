package org.vrdma.vnic.memory;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Objects;

/**
 * Default {@link MemoryRegionBacking}: the whole capacity of one {@link ByteBuf} (heap or direct).
 * Reader and writer indexes of the buffer are never used, so applications may keep their own view.
 *
 * <p>Ownership: the memory owns one reference to the buffer and gives it back in {@link #release()};
 * deregistering a memory region does not release its backing (applications own their memory).
 */
public final class ByteBufMemory implements MemoryRegionBacking {
    private final ByteBuf buf;

    /** Wraps {@code buf}, taking over the caller's reference. */
    public ByteBufMemory(final ByteBuf buf) {
        this.buf = Objects.requireNonNull(buf, "buf");
    }

    /** Allocates {@code capacity} zeroed bytes from {@code allocator}. */
    public static ByteBufMemory allocate(final ByteBufAllocator allocator, final int capacity) {
        final ByteBuf buf = allocator.buffer(capacity, capacity);
        buf.setZero(0, capacity);
        return new ByteBufMemory(buf);
    }

    /** The underlying buffer, for applications that fill or inspect memory directly. */
    @Override
    public ByteBuf buffer() {
        return buf;
    }

    /** Releases the buffer. */
    public void release() {
        buf.release();
    }

    @Override
    public long capacity() {
        return buf.capacity();
    }

    @Override
    public void read(final long offset, final ByteBuf dst, final int length) {
        dst.writeBytes(buf, (int) offset, length);
    }

    @Override
    public void write(final long offset, final ByteBuf src, final int srcIndex, final int length) {
        buf.setBytes((int) offset, src, srcIndex, length);
    }

    @Override
    public void read(final long offset, final byte[] dst, final int dstIndex, final int length) {
        buf.getBytes((int) offset, dst, dstIndex, length);
    }

    @Override
    public void write(final long offset, final byte[] src, final int srcIndex, final int length) {
        buf.setBytes((int) offset, src, srcIndex, length);
    }

    @Override
    public long readLong(final long offset) {
        return buf.getLongLE((int) offset);
    }

    @Override
    public void writeLong(final long offset, final long value) {
        buf.setLongLE((int) offset, value);
    }
}
