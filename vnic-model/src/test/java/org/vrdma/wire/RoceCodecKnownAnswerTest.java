package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** One RoCEv2 frame written out by hand, byte by byte, against the codec. */
class RoceCodecKnownAnswerTest {

    // RC SEND ONLY, 3 payload bytes "abc", 1 pad byte. The ICRC was checked independently with
    // Scapy's RoCE layer, which masks the same fields as Linux rxe.
    private static final String FRAME_HEX = ""
            // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, IPv4
            + "020000000002" + "020000000001" + "0800"
            // IPv4: v4 IHL 5, TOS 0x02 (DSCP 0, ECT(0)), total 48, id 0x1234, DF, TTL 64, UDP,
            // checksum 0x1485, 10.0.0.1 -> 10.0.0.2
            + "45" + "02" + "0030" + "1234" + "4000" + "40" + "11" + "1485" + "0a000001" + "0a000002"
            // UDP: 49152 -> 4791, length 28, checksum 0
            + "c000" + "12b7" + "001c" + "0000"
            // BTH: opcode 0x04, SE 0 M 0 pad 1 tver 0, pkey 0xffff, byte4 0, destQP 0x11, A=1, PSN 5
            + "04" + "10" + "ffff" + "00" + "000011" + "80" + "000005"
            // payload "abc", one pad byte
            + "616263" + "00"
            // ICRC 0x4e6c4207, little-endian
            + "07426c4e";

    private static RoceHeaders sendOnlyHeaders() {
        RoceHeaders h = TestFrames.toQp11(Opcode.RC_SEND_ONLY, 5);
        h.ecn = RoceHeaders.ECT0;
        h.ipId = 0x1234;
        h.ackRequest = true;
        return h;
    }

    @Test
    void encodeWritesTheHandBuiltBytes() {
        ByteBuf payload = Unpooled.copiedBuffer("abc", StandardCharsets.US_ASCII);
        ByteBuf out = Unpooled.buffer();
        try {
            RoceHeaders h = sendOnlyHeaders();
            new RoceCodec().encode(h, payload, out);
            assertThat(ByteBufUtil.hexDump(out)).isEqualTo(FRAME_HEX);
            assertThat(out.readableBytes()).isEqualTo(RoceCodec.frameLength(h, 3));
            assertThat(h.padCount).isEqualTo(1);
            assertThat(payload.readerIndex()).as("payload indexes untouched").isZero();
        } finally {
            payload.release();
            out.release();
        }
    }

    @Test
    void headersPayloadTrailerWritesTheSameBytes() {
        ByteBuf out = Unpooled.buffer();
        try {
            RoceHeaders h = sendOnlyHeaders();
            RoceCodec codec = new RoceCodec();
            int ipOffset = codec.encodeHeaders(h, 3, out);
            out.writeBytes("abc".getBytes(StandardCharsets.US_ASCII));
            codec.encodeTrailer(h, 3, ipOffset, out);
            assertThat(ByteBufUtil.hexDump(out)).isEqualTo(FRAME_HEX);
        } finally {
            out.release();
        }
    }

    @Test
    void trailerRejectsAPayloadOfAnotherLength() {
        ByteBuf out = Unpooled.buffer();
        try {
            RoceHeaders h = sendOnlyHeaders();
            RoceCodec codec = new RoceCodec();
            int ipOffset = codec.encodeHeaders(h, 3, out);
            out.writeBytes("ab".getBytes(StandardCharsets.US_ASCII));
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> codec.encodeTrailer(h, 3, ipOffset, out))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("2 bytes appended, 3 announced");
        } finally {
            out.release();
        }
    }

    @Test
    void decodeReadsTheHandBuiltBytes() {
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(FRAME_HEX));
        try {
            RoceHeaders h = new RoceHeaders();
            assertThat(new RoceCodec().decode(frame, h)).isEqualTo(DecodeStatus.OK);
            assertThat(h.dstMac).isEqualTo(0x020000000002L);
            assertThat(h.srcMac).isEqualTo(0x020000000001L);
            assertThat(h.srcIp).isEqualTo(0x0A000001);
            assertThat(h.dstIp).isEqualTo(0x0A000002);
            assertThat(h.ecn).isEqualTo(RoceHeaders.ECT0);
            assertThat(h.ttl).isEqualTo(64);
            assertThat(h.ipId).isEqualTo(0x1234);
            assertThat(h.udpSrcPort).isEqualTo(49152);
            assertThat(h.opcode).isEqualTo(Opcode.RC_SEND_ONLY);
            assertThat(h.padCount).isEqualTo(1);
            assertThat(h.pkey).isEqualTo(0xFFFF);
            assertThat(h.destQp).isEqualTo(0x11);
            assertThat(h.ackRequest).isTrue();
            assertThat(h.psn).isEqualTo(5);
            assertThat(h.payloadOffset).isEqualTo(54);
            assertThat(h.payloadLengthBytes).isEqualTo(3);
            assertThat(frame.toString(h.payloadOffset, h.payloadLengthBytes, StandardCharsets.US_ASCII))
                    .isEqualTo("abc");
            assertThat(frame.readerIndex()).as("decode moves no index").isZero();
        } finally {
            frame.release();
        }
    }

    @Test
    void icrcIgnoresTheFieldsTheNetworkMayChange() {
        byte[] bytes = ByteBufUtil.decodeHexDump(FRAME_HEX);
        // A switch marks CE and decrements TTL (fixing the IP checksum), sets FECN, fills the UDP
        // checksum: the ICRC stays valid.
        bytes[15] = 0x03;
        bytes[22] = 0x3F;
        bytes[24] = 0;
        bytes[25] = 0;
        bytes[40] = 0x12;
        bytes[41] = 0x34;
        bytes[46] = (byte) 0x80;
        ByteBuf frame = Unpooled.wrappedBuffer(bytes);
        try {
            frame.setShort(24, Ipv4UdpCodec.ipv4Checksum(frame, 14, 20));
            RoceHeaders h = new RoceHeaders();
            assertThat(new RoceCodec().decode(frame, h)).isEqualTo(DecodeStatus.OK);
            assertThat(h.ecn).isEqualTo(RoceHeaders.CE);
            assertThat(h.ttl).isEqualTo(63);
            assertThat(h.fecn).isTrue();

            // The IPv4 identification is invariant: changing it (with a fixed-up IP checksum) breaks
            // the ICRC.
            frame.setShort(18, 0x4321);
            frame.setShort(24, 0);
            frame.setShort(24, Ipv4UdpCodec.ipv4Checksum(frame, 14, 20));
            assertThat(new RoceCodec().decode(frame, h)).isEqualTo(DecodeStatus.BAD_ICRC);
        } finally {
            frame.release();
        }
    }
}
