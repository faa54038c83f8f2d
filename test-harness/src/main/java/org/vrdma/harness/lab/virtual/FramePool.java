package org.vrdma.harness.lab.virtual;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.internal.ObjectUtil;
import io.netty.util.internal.PlatformDependent;
import io.netty.util.internal.SystemPropertyUtil;
import java.nio.ByteBuffer;

/**
 * The buffer allocator of a virtual lab: every frame the vNICs and vSwitches make comes from two
 * free lists of direct buffers (small, for ACKs and CNPs, and MTU-sized for data), and a released
 * frame goes back to its list, so a packet costs no allocation at all once the lists hold the
 * frames in flight. Netty's pooled allocator, behind it for everything else (memory regions,
 * larger buffers), gives each buffer a new wrapper object once its per-thread recycler runs dry,
 * which a fabric holding tens of thousands of frames in its queues makes it do on every packet.
 * Frames are carved out of 16 MiB chunks. Confined to the lab's thread; buffers are not zeroed
 * on reuse (as pooled ones are not).
 *
 * <p><b>Compact frames</b> (labs that carry payload lengths only): nothing ever writes or reads a
 * data frame's payload, only its first few hundred bytes of headers, so MTU-sized frames start
 * {@link #COMPACT_STRIDE_BYTES} apart and overlap the frames after them: each owns only its first
 * {@link #COMPACT_STRIDE_BYTES} bytes, and its payload bytes (undefined in that mode anyway) lie
 * over its neighbours' headers. The headers of the frames in flight then sit in a tenth of the
 * memory and pages (a 4 KiB MTU: 5,184 bytes apart otherwise, each header on a page of its own,
 * tens of thousands of them in a fat tree's queues). A bulk write (a copy, a payload) past the
 * owned bytes is dropped, so it cannot reach a neighbour.
 */
final class FramePool extends AbstractByteBufAllocator {
    static final int SMALL_BYTES = 512;
    /**
     * Frames are carved out of chunks this large, as Netty's pooled buffers are: code that keeps a
     * view per chunk of memory (the ICRC's CRC views) then needs a handful, not one per frame.
     */
    static final int CHUNK_BYTES = 16 << 20;
    /**
     * Distance between compact frames, the bytes each owns: room for the largest headers (outer
     * headers with a full INT option, 178 bytes; inner headers up to 74) and inline data.
     */
    static final int COMPACT_STRIDE_BYTES = 9 * 64;

    private final ByteBufAllocator fallback;
    private final boolean unsafe = PlatformDependent.hasUnsafe();
    private final int largeBytes;
    private final Frames small;
    private final Frames large;
    private boolean closed;
    private long created;

    /** @param largeBytes capacity of the large frames (the largest frame a lab sends) */
    FramePool(int largeBytes, ByteBufAllocator fallback) {
        this(largeBytes, fallback, false);
    }

    /**
     * @param largeBytes capacity of the large frames (the largest frame a lab sends)
     * @param compact large frames own only their first {@link #COMPACT_STRIDE_BYTES} (see above): for
     *     labs whose payload bytes are never written or read
     */
    FramePool(int largeBytes, ByteBufAllocator fallback, boolean compact) {
        super(true);
        this.fallback = fallback;
        this.largeBytes = Math.max(SMALL_BYTES, largeBytes);
        this.small = new Frames(SMALL_BYTES, strideOf(SMALL_BYTES));
        this.large = new Frames(
                this.largeBytes,
                compact && this.largeBytes > COMPACT_STRIDE_BYTES ? COMPACT_STRIDE_BYTES : strideOf(this.largeBytes));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        if (!closed && maxCapacity >= largeBytes) {
            if (initialCapacity <= SMALL_BYTES) {
                return small.take();
            }
            if (initialCapacity <= largeBytes) {
                return large.take();
            }
        }
        return fallback.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return fallback.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return true;
    }

    /** Frames made so far (the most ever in use at once). */
    long framesCreated() {
        return created;
    }

    /** Frees the free frames; frames released later are freed, not kept. */
    void close() {
        closed = true;
        small.freeAll();
        large.freeAll();
    }

    /**
     * Where frames of {@code capacity} bytes start in a chunk: an odd number of cache lines apart.
     * A packet touches only its frame's first lines (the headers), so with a stride of a multiple of
     * 1 KiB (5 KiB for a 4 KiB MTU) every frame's headers would fall in the same sixteenth of the
     * caches' sets (the sets are chosen by the address bits just above the line's) and evict each
     * other; an odd number of lines spreads them over all sets.
     */
    static int strideOf(int capacity) {
        int lines = (capacity + 63) >>> 6;
        return (lines | 1) << 6;
    }

    /** A free list of frames of one capacity. */
    private final class Frames {
        private final int capacity;
        /**
         * Distance between two frames in a chunk: {@link #strideOf} of the capacity, or less for
         * compact frames, which then own only this many bytes.
         */
        private final int strideBytes;

        private final int framesPerChunk;
        private Frame[] free = new Frame[256];
        private int count;
        private ByteBuffer chunk;
        private int carved;

        Frames(int capacity, int strideBytes) {
            this.capacity = capacity;
            this.strideBytes = strideBytes;
            this.framesPerChunk = Math.max(1, CHUNK_BYTES / strideBytes);
        }

        ByteBuf take() {
            if (count == 0) {
                created++;
                if (chunk == null || carved == framesPerChunk) {
                    // The last frame's capacity ends inside the chunk, compact or not.
                    chunk = ByteBuffer.allocateDirect(
                            strideBytes * (framesPerChunk - 1) + Math.max(strideBytes, capacity));
                    carved = 0;
                }
                int offset = carved++ * strideBytes;
                ByteBuffer memory = chunk.duplicate().limit(offset + capacity).position(offset);
                Frame f = unsafe
                        ? new UnsafeFrame(FramePool.this, this, memory, chunk, offset, Math.min(strideBytes, capacity))
                        : new BufferFrame(FramePool.this, this, memory, chunk, offset, Math.min(strideBytes, capacity));
                f.reuse();
                return (ByteBuf) f;
            }
            Frame f = free[--count];
            free[count] = null;
            f.reuse();
            return (ByteBuf) f;
        }

        /** Keeps {@code f}; false when it cannot be kept (it grew, or the pool is closed). */
        boolean give(Frame f) {
            if (closed || f.capacity() != capacity) {
                return false;
            }
            if (count == free.length) {
                free = java.util.Arrays.copyOf(free, count * 2);
            }
            free[count++] = f;
            return true;
        }

        void freeAll() {
            while (count > 0) {
                Frame f = free[--count];
                free[count] = null;
                f.free();
            }
        }
    }

    /** A direct buffer that goes back to its free list when its last reference is released. */
    private interface Frame {
        /** Makes a free frame new: one reference, indices and marks at 0. */
        void reuse();

        /** Frees the memory for good. */
        void free();

        int capacity();
    }

    /**
     * Whether Netty checks each access against the buffer's reference count (as the tests do; the
     * launcher turns it off), read as Netty reads it.
     */
    static final boolean NETTY_CHECKS_ACCESS = SystemPropertyUtil.contains("io.netty.buffer.checkAccessible")
            ? SystemPropertyUtil.getBoolean("io.netty.buffer.checkAccessible", true)
            : SystemPropertyUtil.getBoolean("io.netty.buffer.bytebuf.checkAccessible", true);

    /**
     * A frame accessed through {@code Unsafe} (when Netty may use it). It counts its references in a
     * field of its own, next to the indexes every access reads: Netty keeps the count in an object
     * apart, which nothing else on a packet's way touches, so its last release was a cache miss per
     * packet. When Netty checks accesses ({@link #NETTY_CHECKS_ACCESS}), Netty's count follows this
     * one, so a use after the last release still fails; otherwise it stays at one.
     */
    private static final class UnsafeFrame extends UnpooledUnsafeDirectByteBuf implements Frame {
        private final Frames home;

        private final ByteBuffer chunk;
        private final int offset;
        /** Bytes of its own (from index 0): all of its capacity unless compact. */
        private final int ownedBytes;

        private ByteBuffer chunkView;
        private int references = 1;

        UnsafeFrame(
                ByteBufAllocator alloc, Frames home, ByteBuffer memory, ByteBuffer chunk, int offset, int ownedBytes) {
            super(alloc, memory, Integer.MAX_VALUE);
            this.home = home;
            this.chunk = chunk;
            this.offset = offset;
            this.ownedBytes = ownedBytes;
        }

        /** Of {@code length} bytes written at {@code index}, those that fall in this frame's own memory. */
        private int owned(int index, int length) {
            return capacity() != home.capacity ? length : Math.max(0, Math.min(length, ownedBytes - index));
        }

        // Compact frames: bulk writes stop at the owned bytes (the rest are undefined payload).

        @Override
        public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src, srcIndex, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setBytes(index, src, srcIndex, own);
        }

        @Override
        public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src, srcIndex, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setBytes(index, src, srcIndex, own);
        }

        @Override
        public ByteBuf setBytes(int index, ByteBuffer src) {
            int length = src.remaining();
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src);
            }
            checkIndex(index, length);
            if (own > 0) {
                super.setBytes(index, src.duplicate().limit(src.position() + own));
            }
            src.position(src.limit());
            return this;
        }

        @Override
        public ByteBuf setZero(int index, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setZero(index, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setZero(index, own);
        }

        /** A compact frame's copy has its owned bytes; the rest, undefined here, stay undefined there. */
        @Override
        public ByteBuf copy(int index, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.copy(index, length);
            }
            checkIndex(index, length);
            ByteBuf copy = alloc().directBuffer(length, maxCapacity());
            copy.setBytes(0, this, index, own);
            return copy.setIndex(0, length);
        }

        /** As a pooled buffer's: a view of the whole chunk, positioned on this frame's bytes. */
        @Override
        public ByteBuffer internalNioBuffer(int index, int length) {
            if (capacity() != home.capacity) {
                return super.internalNioBuffer(index, length);
            }
            checkIndex(index, length);
            if (chunkView == null) {
                chunkView = chunk.duplicate();
            }
            return chunkView.limit(offset + index + length).position(offset + index);
        }

        @Override
        public void reuse() {
            references = 1;
            if (NETTY_CHECKS_ACCESS) {
                resetRefCnt();
            }
            clear();
            markReaderIndex();
            markWriterIndex();
        }

        @Override
        public int refCnt() {
            return references;
        }

        @Override
        public ByteBuf retain() {
            return retain(1);
        }

        @Override
        public ByteBuf retain(int increment) {
            ObjectUtil.checkPositive(increment, "increment");
            if (references <= 0 || references + increment <= 0) {
                throw new IllegalReferenceCountException(references, increment);
            }
            references += increment;
            if (NETTY_CHECKS_ACCESS) {
                super.retain(increment);
            }
            return this;
        }

        @Override
        public boolean release() {
            return release(1);
        }

        @Override
        public boolean release(int decrement) {
            ObjectUtil.checkPositive(decrement, "decrement");
            if (references < decrement) {
                throw new IllegalReferenceCountException(references, -decrement);
            }
            references -= decrement;
            if (references > 0) {
                if (NETTY_CHECKS_ACCESS) {
                    super.release(decrement);
                }
                return false;
            }
            if (NETTY_CHECKS_ACCESS) {
                setRefCnt(0);
            }
            deallocate();
            return true;
        }

        @Override
        public ByteBuf touch() {
            return this;
        }

        @Override
        public ByteBuf touch(Object hint) {
            return this;
        }

        @Override
        protected void deallocate() {
            if (!home.give(this)) {
                super.deallocate();
            }
        }

        @Override
        public void free() {
            super.deallocate();
        }
    }

    /** A frame accessed through its {@code ByteBuffer}. */
    private static final class BufferFrame extends UnpooledDirectByteBuf implements Frame {
        private final Frames home;

        private final ByteBuffer chunk;
        private final int offset;
        /** Bytes of its own (from index 0): all of its capacity unless compact. */
        private final int ownedBytes;

        private ByteBuffer chunkView;

        BufferFrame(
                ByteBufAllocator alloc, Frames home, ByteBuffer memory, ByteBuffer chunk, int offset, int ownedBytes) {
            super(alloc, memory, Integer.MAX_VALUE);
            this.home = home;
            this.chunk = chunk;
            this.offset = offset;
            this.ownedBytes = ownedBytes;
        }

        /** Of {@code length} bytes written at {@code index}, those that fall in this frame's own memory. */
        private int owned(int index, int length) {
            return capacity() != home.capacity ? length : Math.max(0, Math.min(length, ownedBytes - index));
        }

        // As UnsafeFrame's.

        @Override
        public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src, srcIndex, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setBytes(index, src, srcIndex, own);
        }

        @Override
        public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src, srcIndex, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setBytes(index, src, srcIndex, own);
        }

        @Override
        public ByteBuf setBytes(int index, ByteBuffer src) {
            int length = src.remaining();
            int own = owned(index, length);
            if (own == length) {
                return super.setBytes(index, src);
            }
            checkIndex(index, length);
            if (own > 0) {
                super.setBytes(index, src.duplicate().limit(src.position() + own));
            }
            src.position(src.limit());
            return this;
        }

        @Override
        public ByteBuf setZero(int index, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.setZero(index, length);
            }
            checkIndex(index, length);
            return own == 0 ? this : super.setZero(index, own);
        }

        /** A compact frame's copy has its owned bytes; the rest, undefined here, stay undefined there. */
        @Override
        public ByteBuf copy(int index, int length) {
            int own = owned(index, length);
            if (own == length) {
                return super.copy(index, length);
            }
            checkIndex(index, length);
            ByteBuf copy = alloc().directBuffer(length, maxCapacity());
            copy.setBytes(0, this, index, own);
            return copy.setIndex(0, length);
        }

        /** As a pooled buffer's: a view of the whole chunk, positioned on this frame's bytes. */
        @Override
        public ByteBuffer internalNioBuffer(int index, int length) {
            if (capacity() != home.capacity) {
                return super.internalNioBuffer(index, length);
            }
            checkIndex(index, length);
            if (chunkView == null) {
                chunkView = chunk.duplicate();
            }
            return chunkView.limit(offset + index + length).position(offset + index);
        }

        @Override
        public void reuse() {
            resetRefCnt();
            clear();
            markReaderIndex();
            markWriterIndex();
        }

        /** The last release stores the count instead of a compare-and-swap: frames stay on the lab's thread. */
        @Override
        public boolean release() {
            if (refCnt() != 1) {
                return super.release();
            }
            setRefCnt(0);
            deallocate();
            return true;
        }

        @Override
        protected void deallocate() {
            if (!home.give(this)) {
                super.deallocate();
            }
        }

        @Override
        public void free() {
            super.deallocate();
        }
    }
}
