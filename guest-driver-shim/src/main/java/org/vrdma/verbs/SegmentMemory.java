package org.vrdma.verbs;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The bytes of a memory region registered from Java: an off-heap {@link MemorySegment} the
 * application keeps using while the vNIC reads and writes it on its event loop, like a DMA engine.
 * Atomics on 8-byte aligned addresses are real atomics of the CPU, so they are atomic against the
 * application's own atomic accesses too. A segment whose arena was closed gives EFAULT.
 */
final class SegmentMemory implements MemoryRegionBacking {
    private static final ValueLayout.OfLong LONG_LE =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle ATOMIC_LONG_LE =
            ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private final MemorySegment segment;
    /** A view over the whole segment for copies to and from Netty buffers; confined to the loop. */
    private final ByteBuffer view;

    SegmentMemory(MemorySegment segment) {
        this.segment = segment;
        this.view = segment.asByteBuffer();
    }

    MemorySegment segment() {
        return segment;
    }

    @Override
    public long capacity() {
        return segment.byteSize();
    }

    @Override
    public void read(long offset, ByteBuf dst, int length) {
        try {
            dst.writeBytes(window(offset, length));
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public void write(long offset, ByteBuf src, int srcIndex, int length) {
        try {
            src.getBytes(srcIndex, window(offset, length));
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public void read(long offset, byte[] dst, int dstIndex, int length) {
        try {
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, dst, dstIndex, length);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public void write(long offset, byte[] src, int srcIndex, int length) {
        try {
            MemorySegment.copy(src, srcIndex, segment, ValueLayout.JAVA_BYTE, offset, length);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public long readLong(long offset) {
        try {
            return segment.get(LONG_LE, offset);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public void writeLong(long offset, long value) {
        try {
            segment.set(LONG_LE, offset, value);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public long compareAndSwap(long offset, long compare, long swap) {
        if (!aligned(offset)) {
            return MemoryRegionBacking.super.compareAndSwap(offset, compare, swap);
        }
        try {
            return (long) ATOMIC_LONG_LE.compareAndExchange(segment, offset, compare, swap);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    @Override
    public long fetchAndAdd(long offset, long add) {
        if (!aligned(offset)) {
            return MemoryRegionBacking.super.fetchAndAdd(offset, add);
        }
        try {
            return (long) ATOMIC_LONG_LE.getAndAdd(segment, offset, add);
        } catch (IllegalStateException e) {
            throw fault(e);
        }
    }

    private boolean aligned(long offset) {
        return ((segment.address() + offset) & 7) == 0;
    }

    private ByteBuffer window(long offset, int length) {
        view.clear();
        view.position((int) offset);
        view.limit((int) offset + length);
        return view;
    }

    private static VerbsException fault(IllegalStateException e) {
        return new VerbsException(Errno.EFAULT, "registered memory is no longer accessible: " + e.getMessage());
    }
}
