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
 */
final class FramePool extends AbstractByteBufAllocator {
    static final int SMALL_BYTES = 512;
    /**
     * Frames are carved out of chunks this large, as Netty's pooled buffers are: code that keeps a
     * view per chunk of memory (the ICRC's CRC views) then needs a handful, not one per frame.
     */
    static final int CHUNK_BYTES = 16 << 20;

    private final ByteBufAllocator fallback;
    private final boolean unsafe = PlatformDependent.hasUnsafe();
    private final int largeBytes;
    private final Frames small;
    private final Frames large;
    private boolean closed;
    private long created;

    /** @param largeBytes capacity of the large frames (the largest frame a lab sends) */
    FramePool(int largeBytes, ByteBufAllocator fallback) {
        super(true);
        this.fallback = fallback;
        this.largeBytes = Math.max(SMALL_BYTES, largeBytes);
        this.small = new Frames(SMALL_BYTES);
        this.large = new Frames(this.largeBytes);
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
        /** Distance between two frames in a chunk: {@link #strideOf} of the capacity. */
        private final int strideBytes;

        private final int framesPerChunk;
        private Frame[] free = new Frame[256];
        private int count;
        private ByteBuffer chunk;
        private int carved;

        Frames(int capacity) {
            this.capacity = capacity;
            this.strideBytes = strideOf(capacity);
            this.framesPerChunk = Math.max(1, CHUNK_BYTES / strideBytes);
        }

        ByteBuf take() {
            if (count == 0) {
                created++;
                if (chunk == null || carved == framesPerChunk) {
                    chunk = ByteBuffer.allocateDirect(strideBytes * framesPerChunk);
                    carved = 0;
                }
                int offset = carved++ * strideBytes;
                ByteBuffer memory = chunk.duplicate().limit(offset + capacity).position(offset);
                Frame f = unsafe
                        ? new UnsafeFrame(FramePool.this, this, memory, chunk, offset)
                        : new BufferFrame(FramePool.this, this, memory, chunk, offset);
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
        private ByteBuffer chunkView;
        private int references = 1;

        UnsafeFrame(ByteBufAllocator alloc, Frames home, ByteBuffer memory, ByteBuffer chunk, int offset) {
            super(alloc, memory, Integer.MAX_VALUE);
            this.home = home;
            this.chunk = chunk;
            this.offset = offset;
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
        private ByteBuffer chunkView;

        BufferFrame(ByteBufAllocator alloc, Frames home, ByteBuffer memory, ByteBuffer chunk, int offset) {
            super(alloc, memory, Integer.MAX_VALUE);
            this.home = home;
            this.chunk = chunk;
            this.offset = offset;
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
