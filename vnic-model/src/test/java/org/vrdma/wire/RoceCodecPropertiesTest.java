package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class RoceCodecPropertiesTest {

    enum BufferKind {
        HEAP,
        DIRECT,
        COMPOSITE,
        /** A frame that starts past other bytes: offsets must be relative to the indexes. */
        AT_OFFSET
    }

    private static final int JUNK_PREFIX_BYTES = 7;

    private final RoceCodec codec = new RoceCodec();

    @Provide
    Arbitrary<Integer> opcodes() {
        return Arbitraries.of(Arrays.stream(RoceFrames.VALID_OPCODES).boxed().toList());
    }

    /** Every field and every payload byte survives encode then decode, on every kind of buffer. */
    @Property(tries = 600)
    void encodeThenDecodeGivesBackTheFieldsAndPayload(
            @ForAll("opcodes") int opcode,
            @ForAll @Size(max = 4096) byte[] payloadBytes,
            @ForAll long seed,
            @ForAll BufferKind kind) {
        byte[] payloadSent = Opcode.hasPayload(opcode) ? payloadBytes : new byte[0];
        RoceHeaders sent = RoceFrames.randomHeaders(opcode, seed);
        ByteBuf payload = Unpooled.wrappedBuffer(payloadSent);
        ByteBuf frame = allocate(kind, RoceCodec.frameLength(sent, payloadSent.length));
        try {
            codec.encode(sent, payload, frame);
            if (kind == BufferKind.AT_OFFSET) {
                frame.readerIndex(JUNK_PREFIX_BYTES);
            }
            assertThat(frame.readableBytes()).isEqualTo(RoceCodec.frameLength(sent, payloadSent.length));
            assertThat(frame.readableBytes() % 2).isZero();
            assertThat(sent.padCount).isEqualTo((4 - payloadSent.length % 4) % 4);

            RoceHeaders got = new RoceHeaders();
            assertThat(codec.decode(frame, got)).isEqualTo(DecodeStatus.OK);
            assertThat(got)
                    .usingRecursiveComparison()
                    .ignoringFields(
                            "ipOffset",
                            "ipHeaderBytes",
                            "udpPayloadOffset",
                            "udpPayloadBytes",
                            "payloadOffset",
                            "payloadLengthBytes")
                    .isEqualTo(sent);
            assertThat(got.payloadLengthBytes).isEqualTo(payloadSent.length);
            assertThat(ByteBufUtil.getBytes(frame, got.payloadOffset, got.payloadLengthBytes))
                    .isEqualTo(payloadSent);
        } finally {
            payload.release();
            frame.release();
        }
    }

    /**
     * CRC-32 catches every single-bit error: a flipped bit anywhere from the IPv4 header to the
     * ICRC, outside the variant fields, never decodes as OK.
     */
    @Property(tries = 1500)
    void aSingleFlippedBitInTheCoveredBytesIsNeverAccepted(
            @ForAll("opcodes") int opcode,
            @ForAll @Size(max = 300) byte[] payloadBytes,
            @ForAll long seed,
            @ForAll @IntRange(min = 0, max = Integer.MAX_VALUE) int bitChoice) {
        byte[] payloadSent = Opcode.hasPayload(opcode) ? payloadBytes : new byte[0];
        RoceHeaders sent = RoceFrames.randomHeaders(opcode, seed);
        ByteBuf payload = Unpooled.wrappedBuffer(payloadSent);
        ByteBuf frame = Unpooled.buffer();
        try {
            codec.encode(sent, payload, frame);
            int firstCovered = Ipv4UdpCodec.ETHERNET_HEADER_BYTES;
            int coveredBits = (frame.readableBytes() - firstCovered) * 8;
            int bit = bitChoice % coveredBits;
            while (isVariant(firstCovered + bit / 8)) {
                bit = (bit + 8) % coveredBits;
            }
            int byteIndex = firstCovered + bit / 8;
            frame.setByte(byteIndex, frame.getByte(byteIndex) ^ (1 << (bit % 8)));

            assertThat(codec.decode(frame, new RoceHeaders()))
                    .as("bit %d of byte %d flipped", bit % 8, byteIndex)
                    .isNotEqualTo(DecodeStatus.OK);
        } finally {
            payload.release();
            frame.release();
        }
    }

    private static boolean isVariant(int byteIndex) {
        for (int i : RoceFrames.VARIANT_BYTE_INDEXES) {
            if (i == byteIndex) {
                return true;
            }
        }
        return false;
    }

    private static ByteBuf allocate(BufferKind kind, int capacity) {
        return switch (kind) {
            case HEAP -> Unpooled.buffer(capacity);
            case DIRECT -> Unpooled.directBuffer(capacity);
            // Two components force the chunked CRC path and cross-component reads.
            case COMPOSITE -> {
                CompositeByteBuf c = Unpooled.compositeBuffer();
                c.addComponent(false, Unpooled.buffer(capacity / 2));
                c.addComponent(false, Unpooled.directBuffer(capacity - capacity / 2));
                yield c;
            }
            case AT_OFFSET -> Unpooled.buffer(capacity + JUNK_PREFIX_BYTES).writeZero(JUNK_PREFIX_BYTES);
        };
    }
}
