package org.vrdma.vswitch.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Ipv4UdpHeaders;
import org.vrdma.wire.RoceCodec;
import org.vrdma.wire.RoceHeaders;

/** Random and damaged datagrams and frames into the Geneve decoders: no throw, always a status. */
class GeneveCodecFuzzTest {
    private static final int ROUNDS = 20_000;

    private final GeneveHeader into = new GeneveHeader();
    private final Ipv4UdpHeaders outer = new Ipv4UdpHeaders();
    private final RoceCodec roce = new RoceCodec();
    private final RoceHeaders roceHeaders = new RoceHeaders();
    private final Set<GeneveDecodeStatus> seen = EnumSet.noneOf(GeneveDecodeStatus.class);

    @Test
    void randomDatagramsNeverThrow() {
        SplittableRandom r = new SplittableRandom(11);
        for (int i = 0; i < ROUNDS; i++) {
            byte[] bytes = new byte[r.nextInt(300)];
            r.nextBytes(bytes);
            if (bytes.length > 0 && r.nextBoolean()) {
                bytes[0] &= 0x3F; // version 0, so the options get parsed
            }
            ByteBuf buf = Unpooled.wrappedBuffer(bytes);
            seen.add(GeneveCodec.decode(buf, into));
            assertThat(GeneveCodec.decapsulate(buf, outer, into)).isNotNull();
            assertThat(buf.refCnt()).isEqualTo(1);
            buf.release();
        }
        assertThat(seen)
                .contains(
                        GeneveDecodeStatus.TRUNCATED,
                        GeneveDecodeStatus.BAD_VERSION,
                        GeneveDecodeStatus.BAD_OPTIONS,
                        GeneveDecodeStatus.UNSUPPORTED_PROTOCOL);
    }

    @Test
    void damagedUnderlayFramesNeverThrow() {
        SplittableRandom r = new SplittableRandom(12);
        for (int i = 0; i < ROUNDS; i++) {
            byte[] frame = validFrame(r);
            for (int m = 1 + r.nextInt(3); m > 0; m--) {
                frame[r.nextInt(frame.length)] = (byte) r.nextInt(256);
            }
            if (r.nextBoolean()) {
                fixIpChecksum(frame);
            }
            if (r.nextInt(3) == 0) {
                frame = Arrays.copyOf(frame, r.nextInt(frame.length + 1));
            }
            ByteBuf buf = Unpooled.wrappedBuffer(frame);
            GeneveDecodeStatus status = GeneveCodec.decapsulate(buf, outer, into);
            seen.add(status);
            if (status == GeneveDecodeStatus.OK) {
                // The inner frame goes on to the RoCE decoder, as in the vSwitch.
                ByteBuf innerFrame = buf.slice(into.payloadOffset, into.payloadLengthBytes);
                assertThat(roce.decode(innerFrame, roceHeaders)).isNotNull();
            }
            assertThat(buf.refCnt()).isEqualTo(1);
            buf.release();
        }
        assertThat(seen)
                .contains(
                        GeneveDecodeStatus.OK,
                        GeneveDecodeStatus.TRUNCATED,
                        GeneveDecodeStatus.BAD_IP_CHECKSUM,
                        GeneveDecodeStatus.NOT_GENEVE_PORT,
                        GeneveDecodeStatus.BAD_LENGTH,
                        GeneveDecodeStatus.BAD_OPTIONS);
    }

    private static byte[] validFrame(SplittableRandom r) {
        GeneveHeader h = new GeneveHeader();
        h.vni = r.nextInt(1 << 24);
        for (int n = r.nextInt(4); n > 0; n--) {
            h.addOption(r.nextInt(1 << 16), r.nextInt(256), new byte[8], 0, 4 * r.nextInt(3));
        }
        byte[] innerBytes = new byte[r.nextInt(100)];
        r.nextBytes(innerBytes);
        ByteBuf inner = Unpooled.wrappedBuffer(innerBytes);
        ByteBuf out = Unpooled.buffer();
        try {
            GeneveCodec.encapsulate(new Ipv4UdpHeaders(), h, inner, out);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            inner.release();
            out.release();
        }
    }

    private static void fixIpChecksum(byte[] frame) {
        int ihlBytes = (frame[14] & 0x0F) * 4;
        if (ihlBytes < 20 || frame.length < 14 + ihlBytes) {
            return;
        }
        ByteBuf b = Unpooled.wrappedBuffer(frame);
        b.setShort(24, 0);
        b.setShort(24, Ipv4UdpCodec.ipv4Checksum(b, 14, ihlBytes));
        b.release();
    }
}
