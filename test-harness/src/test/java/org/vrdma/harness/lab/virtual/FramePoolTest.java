package org.vrdma.harness.lab.virtual;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class FramePoolTest {
    private final FramePool pool = new FramePool(5120, new PooledByteBufAllocator(true));

    @Test
    void releasedFramesComeBackFreshAndLargeRequestsGoToTheFallback() {
        ByteBuf a = pool.directBuffer(100);
        a.writeLong(42).markReaderIndex().readByte();
        a.release();
        ByteBuf b = pool.directBuffer(64);
        assertThat(b).isSameAs(a);
        assertThat(b.refCnt()).isEqualTo(1);
        assertThat(b.readerIndex()).isZero();
        assertThat(b.writerIndex()).isZero();
        assertThat(b.capacity()).isEqualTo(FramePool.SMALL_BYTES);

        ByteBuf large = pool.directBuffer(4200);
        assertThat(large.capacity()).isEqualTo(5120);
        ByteBuf huge = pool.directBuffer(64 * 1024);
        assertThat(pool.framesCreated()).as("the 64 KiB buffer is not a frame").isEqualTo(2);

        // A frame that grew is freed, not kept: the next one is new.
        large.writeZero(6000);
        large.release();
        ByteBuf next = pool.directBuffer(4200);
        assertThat(next).isNotSameAs(large);
        assertThat(pool.framesCreated()).isEqualTo(3);

        b.release();
        next.release();
        huge.release();
        pool.close();
    }

    @Test
    void nioViewSpansTheChunkAndShowsTheFramesBytes() {
        ByteBuf first = pool.directBuffer(1000);
        ByteBuf second = pool.directBuffer(1000);
        second.writeInt(0x01020304).writeInt(0x05060708);
        ByteBuffer view = second.internalNioBuffer(4, 4);
        assertThat(view.remaining()).isEqualTo(4);
        assertThat(view.getInt(view.position())).isEqualTo(0x05060708);
        int stride = FramePool.strideOf(5120);
        assertThat(view.capacity()).as("a view of the whole chunk").isEqualTo(FramePool.CHUNK_BYTES / stride * stride);
        first.release();
        second.release();
        pool.close();
        ByteBuf afterClose = pool.directBuffer(100);
        assertThat(pool.framesCreated()).isEqualTo(2);
        afterClose.release();
    }

    @Test
    void framesStartAnOddNumberOfCacheLinesApart() {
        assertThat(FramePool.strideOf(5120)).isEqualTo(81 * 64);
        assertThat(FramePool.strideOf(FramePool.SMALL_BYTES)).isEqualTo(9 * 64);
        assertThat(FramePool.strideOf(4200)).isEqualTo(67 * 64);
        assertThat(FramePool.strideOf(4224)).isEqualTo(67 * 64);

        ByteBuf first = pool.directBuffer(4200);
        ByteBuf second = pool.directBuffer(4200);
        assertThat(second.memoryAddress() - first.memoryAddress()).isEqualTo(81 * 64);
        assertThat(second.capacity()).isEqualTo(5120);
        // A frame's bytes end before the next frame's begin.
        first.writerIndex(first.capacity());
        first.setByte(first.capacity() - 1, 0x5A);
        second.setByte(0, 0x11);
        assertThat(first.getByte(first.capacity() - 1)).isEqualTo((byte) 0x5A);
        first.release();
        second.release();
        pool.close();
    }

    @Test
    void framesCountTheirReferencesAndFailOnUseAfterTheLastRelease() {
        ByteBuf frame = pool.directBuffer(100);
        frame.writeInt(7);
        assertThat(frame.refCnt()).isEqualTo(1);
        assertThat(frame.retain(2)).isSameAs(frame);
        assertThat(frame.refCnt()).isEqualTo(3);
        assertThat(frame.release()).isFalse();
        assertThat(frame.release()).isFalse();
        assertThat(frame.refCnt()).isEqualTo(1);
        assertThat(frame.getInt(0)).isEqualTo(7);
        assertThat(frame.release()).isTrue();
        assertThat(frame.refCnt()).isZero();
        assertThatThrownBy(frame::release).isInstanceOf(IllegalReferenceCountException.class);
        assertThatThrownBy(frame::retain).isInstanceOf(IllegalReferenceCountException.class);
        // The tests run with Netty's access checks on: the released frame's bytes are off limits.
        assertThat(FramePool.NETTY_CHECKS_ACCESS).isTrue();
        assertThatThrownBy(() -> frame.getInt(0)).isInstanceOf(IllegalReferenceCountException.class);

        // Back in the free list: the next frame is the same one, fresh, with one reference.
        ByteBuf again = pool.directBuffer(100);
        assertThat(again).isSameAs(frame);
        assertThat(again.refCnt()).isEqualTo(1);
        assertThat(again.getInt(0)).isEqualTo(7); // not zeroed, and readable again
        ByteBuf slice = again.retainedSlice(0, 4);
        assertThat(again.refCnt()).isEqualTo(2);
        assertThat(slice.release()).isFalse();
        assertThat(again.release()).isTrue();
        pool.close();
    }

    @Test
    void compactFramesOverlapButOwnTheirHeadersAndDropBulkWritesPastThem() {
        FramePool compact = new FramePool(5120, new PooledByteBufAllocator(true), true);
        int own = FramePool.COMPACT_STRIDE_BYTES;
        ByteBuf first = compact.directBuffer(4200);
        ByteBuf second = compact.directBuffer(4200);
        assertThat(second.memoryAddress() - first.memoryAddress()).isEqualTo(own);
        assertThat(first.capacity()).isEqualTo(5120);
        ByteBuf small = compact.directBuffer(100);
        assertThat(small.capacity()).as("small frames are not compact").isEqualTo(FramePool.SMALL_BYTES);

        second.writeLong(0x1122_3344_5566_7788L);
        // Headers and a payload written past the owned bytes: only the headers land.
        first.writeZero(own - 8).writeLong(0x0102_0304_0506_0708L);
        first.writeBytes(new byte[4000]);
        first.setBytes(own - 4, ByteBuffer.wrap(new byte[] {9, 9, 9, 9, 9, 9, 9, 9}));
        first.setBytes(own, new byte[64], 0, 64);
        first.setZero(own - 2, 100);
        ByteBuf filler = Unpooled.buffer(1000).writeZero(1000);
        first.setBytes(own - 1, filler, 0, 1000);
        assertThat(first.writerIndex()).isEqualTo(own + 4000);
        assertThat(first.getInt(own - 8)).isEqualTo(0x0102_0304);
        assertThat(first.getByte(own - 5)).isEqualTo((byte) 0x04);
        assertThat(first.getByte(own - 4)).isEqualTo((byte) 9);
        assertThat(first.getByte(own - 3)).isEqualTo((byte) 9);
        assertThat(second.getLong(0)).as("the next frame's headers").isEqualTo(0x1122_3344_5566_7788L);
        assertThatThrownBy(() -> first.setBytes(5000, new byte[200], 0, 200))
                .isInstanceOf(IndexOutOfBoundsException.class);

        // A copy (a duplicating fault) keeps the length and the owned bytes, and spares the neighbours.
        ByteBuf third = compact.directBuffer(4200).writeLong(0x0A0B_0C0D_0E0F_1011L);
        ByteBuf copy = first.copy(0, first.writerIndex());
        assertThat(copy.readableBytes()).isEqualTo(own + 4000);
        assertThat(copy.getLong(own - 8)).isEqualTo(first.getLong(own - 8));
        assertThat(second.getLong(0)).isEqualTo(0x1122_3344_5566_7788L);
        assertThat(third.getLong(0)).isEqualTo(0x0A0B_0C0D_0E0F_1011L);
        ByteBuf fromEight = first.copy(8, 1000);
        assertThat(fromEight.readableBytes()).isEqualTo(1000);
        assertThat(fromEight.getInt(own - 16)).isEqualTo(0x0102_0304);
        for (ByteBuf b : new ByteBuf[] {first, second, third, small, copy, fromEight, filler}) {
            b.release();
        }
        compact.close();
    }
}
