package org.vrdma.harness.lab.virtual;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
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
        assertThat(view.capacity()).as("a view of the whole chunk").isEqualTo(FramePool.CHUNK_BYTES / 5120 * 5120);
        first.release();
        second.release();
        pool.close();
        ByteBuf afterClose = pool.directBuffer(100);
        assertThat(pool.framesCreated()).isEqualTo(2);
        afterClose.release();
    }
}
