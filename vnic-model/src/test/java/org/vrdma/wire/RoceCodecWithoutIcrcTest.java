package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.memory.LengthOnlyMemory;

/**
 * Frames that carry a payload's length only: the payload (from a {@link LengthOnlyMemory}), pad and
 * ICRC are never written, the frame is as long as a real one, and a codec without ICRC decodes it.
 */
class RoceCodecWithoutIcrcTest {
    private static final byte UNTOUCHED = 0x5A;

    private static RoceHeaders writeOnly() {
        RoceHeaders h = TestFrames.rdmaWriteOnly(7, 0x1000, 1001);
        h.ecn = RoceHeaders.ECT0;
        return h;
    }

    @Test
    void encodeLeavesThePayloadAndIcrcUnwrittenAndDecodeAcceptsTheFrame() {
        RoceHeaders h = writeOnly();
        int length = RoceCodec.frameLength(h, 1001);
        ByteBuf out = Unpooled.buffer(length);
        try {
            for (int i = 0; i < length; i++) {
                out.setByte(i, UNTOUCHED);
            }
            RoceCodec codec = new RoceCodec(false);
            int ip = codec.encodeHeaders(h, 1001, out);
            int headersEnd = out.writerIndex();
            new LengthOnlyMemory(1 << 20).read(0, out, 1001);
            codec.encodeTrailer(h, 1001, ip, out);

            assertThat(out.readableBytes()).isEqualTo(length);
            for (int i = headersEnd; i < length; i++) {
                assertThat(out.getByte(i)).as("byte %d", i).isEqualTo(UNTOUCHED);
            }
            RoceHeaders d = new RoceHeaders();
            assertThat(codec.decode(out, d)).isEqualTo(DecodeStatus.OK);
            assertThat(d.opcode).isEqualTo(Opcode.RC_RDMA_WRITE_ONLY);
            assertThat(d.psn).isEqualTo(7);
            assertThat(d.rethDmaLengthBytes).isEqualTo(1001);
            assertThat(d.payloadLengthBytes).isEqualTo(1001);
            // A codec that checks the ICRC rejects it: its ICRC field holds no checksum.
            assertThat(new RoceCodec().decode(out, new RoceHeaders())).isEqualTo(DecodeStatus.BAD_ICRC);
        } finally {
            out.release();
        }
    }
}
