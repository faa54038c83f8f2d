package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.vnic.transport.DeferredPayloadAllocator;

/**
 * The underlay's side of payloads left in the memory region: it agrees only for the frame it just
 * handed out, once, and only while the switch passes frames to it unread; a frame handed elsewhere
 * ({@code completeFrame}) gets its payload copied in from the region.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeferredPayloadTest {
    private static final int FRAME_BYTES = 4400;
    private static final int PAYLOAD_INDEX = 200;
    private static final int PAYLOAD_BYTES = 4096;

    private EventLoopGroup group;
    private VSwitchHost host;
    private ByteBuf region;

    @BeforeEach
    void start() throws Exception {
        group = UdpTestHosts.epollGroup(1, "deferred-payload");
        host = UdpTestHosts.loopbackHost(group, "a");
        region = PooledByteBufAllocator.DEFAULT.directBuffer(PAYLOAD_BYTES);
        for (int i = 0; i < PAYLOAD_BYTES; i++) {
            region.writeByte(i * 7 + 3);
        }
    }

    @AfterEach
    void stop() throws Exception {
        region.release();
        UdpTestHosts.closeAll(group, host);
    }

    @Test
    void aFrameHandedElsewhereGetsItsPayloadFromTheRegion() {
        boolean direct = host.call(vs -> host.underlay().directSends());
        assertThat(direct).as("sendmmsg through FFM").isTrue();
        host.call(vs -> {
            ByteBufAllocator frames = host.underlay().frameAllocator();
            ByteBuf frame = frames.directBuffer(FRAME_BYTES);
            try {
                frame.setZero(0, FRAME_BYTES);
                DeferredPayloadAllocator deferring = (DeferredPayloadAllocator) frames;
                assertThat(deferring.deferPayload(frame, PAYLOAD_INDEX, PAYLOAD_BYTES, address(region)))
                        .as("the frame just handed out")
                        .isTrue();
                assertThat(deferring.deferPayload(frame, PAYLOAD_INDEX, PAYLOAD_BYTES, address(region)))
                        .as("a second time")
                        .isFalse();
                // Unwritten until the frame goes anywhere but the socket.
                assertThat(frame.getByte(PAYLOAD_INDEX)).isZero();
                host.underlay().completeFrame(frame);
                assertThat(frame.slice(PAYLOAD_INDEX, PAYLOAD_BYTES)).isEqualTo(region.slice(0, PAYLOAD_BYTES));
                assertThat(frame.getByte(PAYLOAD_INDEX - 1))
                        .as("bytes around it untouched")
                        .isZero();
                assertThat(frame.getByte(PAYLOAD_INDEX + PAYLOAD_BYTES)).isZero();
            } finally {
                frame.release();
            }
            return null;
        });
    }

    @Test
    void refusedForOtherBuffersPastTheFrameAndWhileCapturing() {
        host.call(vs -> {
            ByteBufAllocator frames = host.underlay().frameAllocator();
            DeferredPayloadAllocator deferring = (DeferredPayloadAllocator) frames;
            ByteBuf other = PooledByteBufAllocator.DEFAULT.directBuffer(FRAME_BYTES);
            ByteBuf frame = frames.directBuffer(FRAME_BYTES);
            try {
                assertThat(deferring.deferPayload(other, PAYLOAD_INDEX, PAYLOAD_BYTES, address(region)))
                        .as("a buffer the underlay did not hand out")
                        .isFalse();
                assertThat(deferring.deferPayload(frame, FRAME_BYTES - 100, PAYLOAD_BYTES, address(region)))
                        .as("a payload beyond the frame")
                        .isFalse();
                vs.capture((point, f, nowNs) -> {});
                assertThat(vs.sendsFramesAsBuilt()).isFalse();
                assertThat(deferring.deferPayload(frame, PAYLOAD_INDEX, PAYLOAD_BYTES, address(region)))
                        .as("while a capture reads every frame")
                        .isFalse();
                vs.capture(null);
                assertThat(vs.sendsFramesAsBuilt()).isTrue();
            } finally {
                other.release();
                frame.release();
            }
            return null;
        });
    }

    private static long address(ByteBuf b) {
        return b.memoryAddress() + b.readerIndex();
    }
}
