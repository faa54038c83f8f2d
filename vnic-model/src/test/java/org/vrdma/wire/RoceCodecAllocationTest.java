package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Encode and decode allocate nothing per packet. Decode is measured on heap and direct buffers;
 * encode on heap buffers only, because Netty itself may allocate when copying a heap payload into a
 * direct buffer without {@code sun.misc.Unsafe} (the default on this JDK).
 */
class RoceCodecAllocationTest {
    private static final int WARMUP_ROUNDS = 50_000;
    private static final int MEASURED_ROUNDS = 20_000;
    // Room for the measurement's own noise; a per-packet allocation would be ~20 bytes x 20,000.
    private static final long ALLOWED_BYTES = 4_096;

    @Test
    void encodeAndDecodeAllocateNothingPerPacket() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        RoceCodec codec = new RoceCodec();
        RoceHeaders sent = RoceFrames.randomHeaders(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 42);
        RoceHeaders got = new RoceHeaders();
        ByteBuf payload = Unpooled.wrappedBuffer(new byte[1024]);
        // Wrapped buffers carry no leak-detector wrapper, which would record every access.
        ByteBuf heap = Unpooled.wrappedBuffer(new byte[2048]);
        ByteBuf direct = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(2048));
        try {
            // Wrapped buffers start full: empty them before writing.
            codec.encode(sent, payload, heap.clear());
            direct.clear().writeBytes(heap);
            roundTrips(codec, sent, got, payload, heap, direct, WARMUP_ROUNDS);
            long before = threads.getCurrentThreadAllocatedBytes();
            int ok = roundTrips(codec, sent, got, payload, heap, direct, MEASURED_ROUNDS);
            long allocatedBytes = threads.getCurrentThreadAllocatedBytes() - before;

            assertThat(ok).isEqualTo(2 * MEASURED_ROUNDS);
            assertThat(allocatedBytes).isLessThan(ALLOWED_BYTES);
        } finally {
            payload.release();
            heap.release();
            direct.release();
        }
    }

    private static int roundTrips(
            RoceCodec codec, RoceHeaders sent, RoceHeaders got, ByteBuf payload, ByteBuf heap, ByteBuf direct, int n) {
        int ok = 0;
        for (int i = 0; i < n; i++) {
            sent.psn = i;
            heap.clear();
            codec.encode(sent, payload, heap);
            ok += codec.decode(heap, got) == DecodeStatus.OK && got.psn == i ? 1 : 0;
            ok += codec.decode(direct, got) == DecodeStatus.OK ? 1 : 0;
        }
        return ok;
    }
}
