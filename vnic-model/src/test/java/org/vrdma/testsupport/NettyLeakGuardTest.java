package org.vrdma.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

class NettyLeakGuardTest {
    @Test
    void aBufferDroppedWithoutReleaseIsReported() {
        NettyLeakGuard.collect(); // start clean
        leakOne();
        assertThat(NettyLeakGuard.collect()).anySatisfy(leak -> assertThat(leak).contains("LEAK"));
        assertThat(NettyLeakGuard.collect()).as("reports are consumed").isEmpty();
    }

    @Test
    void releasedBuffersAreNotReported() {
        NettyLeakGuard.collect();
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(128);
        buf.writeLong(1);
        buf.release();
        assertThat(NettyLeakGuard.collect()).isEmpty();
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.heapBuffer(64);
        leaked.writeInt(42);
        // Dropped on purpose without release().
    }
}
