package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.transport.RocePacketCodec;

/**
 * A codec that writes the ICRC but does not check it on receive (for underlays whose own checksum
 * covers the frame): what it sends is valid for any receiver, and a frame whose ICRC no longer
 * matches is decoded by it and rejected by a checking codec.
 */
class RoceCodecReceiveIcrcCheckTest {
    private static final int PAYLOAD_BYTES = 4096;

    private static RoceHeaders writeOnly() {
        return TestFrames.rdmaWriteOnly(9, 0x2000, PAYLOAD_BYTES);
    }

    @Test
    void framesSentCarryAValidIcrcAndReceivedOnesAreNotChecked() {
        RoceCodec trusting = new RoceCodec(true, false);
        RoceCodec checking = new RoceCodec();
        assertThat(trusting.icrcVerified()).isFalse();
        assertThat(checking.icrcVerified()).isTrue();
        // Without an ICRC at all there is nothing to verify either.
        assertThat(new RoceCodec(false, true).icrcVerified()).isFalse();

        ByteBuf payload = Unpooled.directBuffer(PAYLOAD_BYTES);
        RoceHeaders h = writeOnly();
        ByteBuf frame = Unpooled.directBuffer(RoceCodec.frameLength(h, PAYLOAD_BYTES));
        try {
            for (int i = 0; i < PAYLOAD_BYTES; i++) {
                payload.writeByte(i * 31 + 7);
            }
            trusting.encode(h, payload, frame);
            RoceHeaders d = new RoceHeaders();
            assertThat(checking.decode(frame, d)).isEqualTo(DecodeStatus.OK);
            assertThat(d.payloadLengthBytes).isEqualTo(PAYLOAD_BYTES);

            int payloadByte = d.payloadOffset + 100;
            frame.setByte(payloadByte, frame.getByte(payloadByte) ^ 0x01);
            assertThat(checking.decode(frame, new RoceHeaders())).isEqualTo(DecodeStatus.BAD_ICRC);
            RoceHeaders t = new RoceHeaders();
            assertThat(trusting.decode(frame, t)).isEqualTo(DecodeStatus.OK);
            assertThat(t.psn).isEqualTo(9);
            assertThat(t.rethDmaLengthBytes).isEqualTo(PAYLOAD_BYTES);
            assertThat(t.payloadLengthBytes).isEqualTo(PAYLOAD_BYTES);
            // The header checks still run: a bad IPv4 checksum is rejected as before.
            frame.setByte(frame.readerIndex() + 14 + 8, frame.getByte(frame.readerIndex() + 14 + 8) ^ 0x01);
            assertThat(trusting.decode(frame, new RoceHeaders())).isNotEqualTo(DecodeStatus.OK);
        } finally {
            payload.release();
            frame.release();
        }
        assertThat(RocePacketCodec.withoutReceiveIcrcCheck().checksReceivedIcrc())
                .isFalse();
        assertThat(new RocePacketCodec().checksReceivedIcrc()).isTrue();
    }
}
