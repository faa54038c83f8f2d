package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random and damaged frames into the decoder: it never throws, always names a status, and touches
 * no buffer's reference count. Seeded, so a failure reproduces.
 */
class RoceCodecFuzzTest {
    private static final int ROUNDS = 20_000;

    private final RoceCodec codec = new RoceCodec();
    private final RoceHeaders into = new RoceHeaders();
    private final Set<DecodeStatus> seen = EnumSet.noneOf(DecodeStatus.class);

    @Test
    void randomBytesNeverThrow() {
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < ROUNDS; i++) {
            byte[] bytes = new byte[r.nextInt(200)];
            r.nextBytes(bytes);
            if (bytes.length >= 24 && r.nextBoolean()) {
                // Often look like IPv4 so the deeper checks run too.
                bytes[12] = 0x08;
                bytes[13] = 0x00;
                bytes[14] = 0x45;
            }
            decode(bytes);
        }
        assertThat(seen).contains(DecodeStatus.TRUNCATED, DecodeStatus.NOT_IPV4, DecodeStatus.BAD_IP_CHECKSUM);
    }

    @Test
    void everyTruncationOfAValidFrameIsTruncated() {
        SplittableRandom r = new SplittableRandom(2);
        for (int op : RoceFrames.VALID_OPCODES) {
            byte[] frame = validFrame(op, r);
            for (int len = 0; len < frame.length; len++) {
                byte[] prefix = Arrays.copyOf(frame, len);
                assertThat(decode(prefix))
                        .as("%s cut to %d bytes", Opcode.name(op), len)
                        .isEqualTo(DecodeStatus.TRUNCATED);
            }
            byte[] padded = Arrays.copyOf(frame, frame.length + 1 + r.nextInt(20));
            assertThat(decode(padded)).as("Ethernet padding is ignored").isEqualTo(DecodeStatus.OK);
        }
    }

    @Test
    void mutatedValidFramesNeverThrow() {
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < ROUNDS; i++) {
            int op = RoceFrames.VALID_OPCODES[r.nextInt(RoceFrames.VALID_OPCODES.length)];
            byte[] frame = validFrame(op, r);
            int mutations = 1 + r.nextInt(4);
            for (int m = 0; m < mutations; m++) {
                int at = Ipv4UdpCodec.ETHERNET_HEADER_BYTES
                        + r.nextInt(frame.length - Ipv4UdpCodec.ETHERNET_HEADER_BYTES);
                frame[at] = (byte) r.nextInt(256);
            }
            if (r.nextBoolean()) {
                // Keep the IP checksum right so the UDP and RoCE checks are reached.
                fixIpChecksum(frame);
            }
            if (r.nextInt(4) == 0) {
                frame = Arrays.copyOf(frame, r.nextInt(frame.length + 1));
            }
            decode(frame);
        }
        assertThat(seen)
                .contains(
                        DecodeStatus.BAD_IP_CHECKSUM,
                        DecodeStatus.BAD_LENGTH,
                        DecodeStatus.NOT_ROCE_PORT,
                        DecodeStatus.UNKNOWN_OPCODE,
                        DecodeStatus.BAD_TRANSPORT_VERSION,
                        DecodeStatus.BAD_ICRC,
                        DecodeStatus.TRUNCATED);
    }

    private byte[] validFrame(int op, SplittableRandom r) {
        RoceHeaders h = RoceFrames.randomHeaders(op, r.nextLong());
        byte[] payload = new byte[Opcode.hasPayload(op) ? r.nextInt(64) : 0];
        r.nextBytes(payload);
        ByteBuf p = Unpooled.wrappedBuffer(payload);
        ByteBuf out = Unpooled.buffer();
        try {
            codec.encode(h, p, out);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            p.release();
            out.release();
        }
    }

    private static void fixIpChecksum(byte[] frame) {
        ByteBuf b = Unpooled.wrappedBuffer(frame);
        try {
            int ihlBytes = (frame[14] & 0x0F) * 4;
            if (ihlBytes >= 20 && frame.length >= 14 + ihlBytes) {
                b.setShort(24, 0);
                b.setShort(24, Ipv4UdpCodec.ipv4Checksum(b, 14, ihlBytes));
            }
        } finally {
            b.release();
        }
    }

    private DecodeStatus decode(byte[] bytes) {
        ByteBuf frame = Unpooled.wrappedBuffer(bytes);
        DecodeStatus status = codec.decode(frame, into);
        assertThat(status).isNotNull();
        assertThat(frame.refCnt()).isEqualTo(1);
        assertThat(frame.readerIndex()).isZero();
        // An empty array wraps to Unpooled.EMPTY_BUFFER, which is never freed.
        assertThat(frame.release()).isEqualTo(bytes.length > 0);
        seen.add(status);
        return status;
    }
}
