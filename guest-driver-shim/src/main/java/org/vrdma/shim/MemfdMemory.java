package org.vrdma.shim;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The memory of a zero-copy region: the application's registered pages, which the guest library
 * re-backed with a sealed memfd at registration, mapped into the vNIC too ({@link Memfd}). The vNIC
 * reads and writes them like a DMA engine with plain memory copies: no system call per packet.
 *
 * <p>Like pinned pages of a kernel driver, the mapping lives until the region is deregistered (or
 * the application's connection closes), whatever the application does to its own mappings
 * meanwhile. Closing invalidates the segment before unmapping it, so an access that races a
 * deregistration gets {@link VerbsException} EFAULT, never a fault of the vNIC process. Atomics on
 * 8-byte aligned addresses are CPU atomics, atomic against the application's own atomic accesses.
 *
 * <p><b>Sending from the mapping.</b> {@link #buffer()} is a direct buffer over the mapping, so a
 * frame's payload may leave from the application's pages (the underlay gathers it when it sends, as
 * for the Java path's regions) instead of being copied into the frame. Such a frame still points at
 * the mapping until the underlay's next flush, a task the event loop runs after the one that built
 * the frame: deregistration therefore {@linkplain #retire() retires} the mapping (no new frame
 * defers to it, reads and writes still work) and {@linkplain #close() unmaps} it a device turn later
 * ({@code Session.closeRetired}). {@code -Dvrdma.shim.sendFromMapping=false} copies every payload.
 *
 * <p>Confined to the device's thread, like every backing.
 */
final class MemfdMemory implements MemoryRegionBacking, AutoCloseable {
    /** All of the address space, to copy from and to Netty buffers' native addresses without a view. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final ValueLayout.OfLong LONG_LE =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle ATOMIC_LONG_LE =
            ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    /**
     * Whether payloads may leave from the mapping ({@code -Dvrdma.shim.sendFromMapping}, default true;
     * needs Netty's unsafe access for a buffer over foreign memory).
     */
    static final boolean SEND_FROM_MAPPING =
            !"false".equals(System.getProperty("vrdma.shim.sendFromMapping")) && PlatformDependent.hasUnsafe();

    private final Arena arena;
    /** The registered bytes only: the mapping's page rounding stays out of reach. */
    private final MemorySegment region;
    /** {@link #buffer()}, made on first use; null once retired. */
    private ByteBuf view;

    private boolean retired;

    private MemfdMemory(final Arena arena, final MemorySegment region) {
        this.arena = arena;
        this.region = region;
    }

    /**
     * Maps the {@code length} registered bytes found at {@code fileOffset} of the memfd {@code fd} of
     * process {@code pid} (the whole pages around them are mapped).
     *
     * @throws VerbsException EINVAL (not a sealed memfd, too small), EPERM, ENOMEM
     */
    static MemfdMemory map(final int pid, final int fd, final long fileOffset, final long length) {
        if (fileOffset < 0 || length <= 0 || fileOffset + length < 0) {
            throw new VerbsException(Errno.EINVAL, "bad memfd range " + fileOffset + "+" + length);
        }
        final long first = fileOffset & ~(Memfd.PAGE_BYTES - 1);
        final long head = fileOffset - first;
        final long bytes = (head + length + Memfd.PAGE_BYTES - 1) & ~(Memfd.PAGE_BYTES - 1);
        final Arena arena = Arena.ofShared();
        try {
            return new MemfdMemory(
                    arena, Memfd.map(pid, fd, first, bytes, arena).asSlice(head, length));
        } catch (final RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * A direct buffer over the registered bytes (index 0 is the region's first byte), from which a
     * frame's payload may be sent; null when retired, beyond 2 GiB, or sending from the mapping is off.
     */
    @Override
    public ByteBuf buffer() {
        if (view == null && !retired && SEND_FROM_MAPPING && region.byteSize() <= Integer.MAX_VALUE) {
            // The NIO view keeps the arena's scope: a read through it after the unmap is an
            // IllegalStateException, not a fault (Netty's own accessors read the address unchecked).
            view = Unpooled.wrappedBuffer(region.asByteBuffer());
        }
        return view;
    }

    /**
     * The region is deregistered: no frame built from now on points at the mapping, which stays
     * mapped (for frames built before, still to be sent) until {@link #close()}.
     */
    void retire() {
        retired = true;
        view = null;
    }

    /** Unmaps: later accesses fail with EFAULT. Idempotent. */
    @Override
    public void close() {
        retire();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }

    @Override
    public long capacity() {
        return region.byteSize();
    }

    @Override
    public void read(final long offset, final ByteBuf dst, final int length) {
        try {
            dst.ensureWritable(length);
            final int at = dst.writerIndex();
            if (dst.hasMemoryAddress()) {
                MemorySegment.copy(region, offset, ALL, dst.memoryAddress() + at, length);
            } else if (dst.hasArray()) {
                MemorySegment.copy(region, ValueLayout.JAVA_BYTE, offset, dst.array(), dst.arrayOffset() + at, length);
            } else {
                dst.setBytes(at, region.asSlice(offset, length).asByteBuffer());
            }
            dst.writerIndex(at + length);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public void write(final long offset, final ByteBuf src, final int srcIndex, final int length) {
        try {
            if (src.hasMemoryAddress()) {
                MemorySegment.copy(ALL, src.memoryAddress() + srcIndex, region, offset, length);
            } else if (src.hasArray()) {
                MemorySegment.copy(
                        src.array(), src.arrayOffset() + srcIndex, region, ValueLayout.JAVA_BYTE, offset, length);
            } else {
                src.getBytes(srcIndex, region.asSlice(offset, length).asByteBuffer());
            }
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public void read(final long offset, final byte[] dst, final int dstIndex, final int length) {
        try {
            MemorySegment.copy(region, ValueLayout.JAVA_BYTE, offset, dst, dstIndex, length);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public void write(final long offset, final byte[] src, final int srcIndex, final int length) {
        try {
            MemorySegment.copy(src, srcIndex, region, ValueLayout.JAVA_BYTE, offset, length);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public long readLong(final long offset) {
        try {
            return region.get(LONG_LE, offset);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public void writeLong(final long offset, final long value) {
        try {
            region.set(LONG_LE, offset, value);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public long compareAndSwap(final long offset, final long compare, final long swap) {
        if (!aligned(offset)) {
            return MemoryRegionBacking.super.compareAndSwap(offset, compare, swap);
        }
        try {
            return (long) ATOMIC_LONG_LE.compareAndExchange(region, offset, compare, swap);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    @Override
    public long fetchAndAdd(final long offset, final long add) {
        if (!aligned(offset)) {
            return MemoryRegionBacking.super.fetchAndAdd(offset, add);
        }
        try {
            return (long) ATOMIC_LONG_LE.getAndAdd(region, offset, add);
        } catch (final IllegalStateException | IndexOutOfBoundsException e) {
            throw fault(e);
        }
    }

    private boolean aligned(final long offset) {
        return ((region.address() + offset) & 7) == 0;
    }

    private static VerbsException fault(final RuntimeException e) {
        return new VerbsException(Errno.EFAULT, "zero-copy region not accessible: " + e.getMessage());
    }
}
