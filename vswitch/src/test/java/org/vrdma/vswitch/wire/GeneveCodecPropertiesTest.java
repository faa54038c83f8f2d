package org.vrdma.vswitch.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.vrdma.wire.Ipv4UdpHeaders;

class GeneveCodecPropertiesTest {

    /** One TLV option as a test value. */
    record Option(int optionClass, int type, byte[] data) {}

    @Provide
    Arbitrary<List<Option>> optionLists() {
        Arbitrary<Option> option = Combinators.combine(
                        Arbitraries.integers().between(0, 0xFFFF),
                        Arbitraries.integers().between(0, 0xFF),
                        Arbitraries.integers()
                                .between(0, 8)
                                .flatMap(words ->
                                        Arbitraries.bytes().array(byte[].class).ofSize(words * 4)))
                .as(Option::new);
        // At most 20 options of at most 36 bytes each would overflow 252 bytes: keep what fits.
        return option.list().ofMaxSize(20).map(GeneveCodecPropertiesTest::fitting);
    }

    private static List<Option> fitting(List<Option> options) {
        List<Option> kept = new ArrayList<>();
        int bytes = 0;
        for (Option o : options) {
            int size = GeneveHeader.OPTION_HEADER_BYTES + o.data().length;
            if (bytes + size <= GeneveHeader.MAX_OPTIONS_BYTES) {
                kept.add(o);
                bytes += size;
            }
        }
        return kept;
    }

    /** Header fields, every option and the inner frame survive encapsulate then decapsulate. */
    @Property(tries = 500)
    void encapsulateThenDecapsulateGivesBackHeaderOptionsAndInnerFrame(
            @ForAll @IntRange(min = 0, max = 0xFFFFFF) int vni,
            @ForAll boolean oam,
            @ForAll("optionLists") List<Option> options,
            @ForAll @Size(max = 1500) byte[] innerFrame) {
        GeneveHeader sent = new GeneveHeader();
        sent.vni = vni;
        sent.oam = oam;
        for (Option o : options) {
            sent.addOption(o.optionClass(), o.type(), o.data(), 0, o.data().length);
        }
        Ipv4UdpHeaders outer = new Ipv4UdpHeaders();
        outer.srcIp = 0xC0A80001;
        outer.dstIp = 0xC0A80002;
        outer.udpSrcPort = vni & 0xFFFF;
        ByteBuf inner = Unpooled.wrappedBuffer(innerFrame);
        ByteBuf frame = Unpooled.buffer();
        try {
            GeneveCodec.encapsulate(outer, sent, inner, frame);
            assertThat(frame.readableBytes()).isEqualTo(GeneveCodec.encapsulatedLength(sent, innerFrame.length));

            GeneveHeader got = new GeneveHeader();
            Ipv4UdpHeaders gotOuter = new Ipv4UdpHeaders();
            assertThat(GeneveCodec.decapsulate(frame, gotOuter, got)).isEqualTo(GeneveDecodeStatus.OK);
            assertThat(gotOuter.udpDstPort).isEqualTo(GeneveCodec.GENEVE_UDP_PORT);
            assertThat(gotOuter.srcIp).isEqualTo(outer.srcIp);
            assertThat(got.vni).isEqualTo(vni);
            assertThat(got.oam).isEqualTo(oam);
            assertThat(got.critical).isEqualTo(options.stream().anyMatch(o -> o.type() >= 0x80));
            assertThat(got.protocolType).isEqualTo(GeneveHeader.PROTOCOL_ETHERNET);
            assertThat(got.optionsLengthBytes()).isEqualTo(sent.optionsLengthBytes());
            assertThat(readOptions(got))
                    .usingRecursiveFieldByFieldElementComparator()
                    .isEqualTo(options);
            assertThat(ByteBufUtil.getBytes(frame, got.payloadOffset, got.payloadLengthBytes))
                    .isEqualTo(innerFrame);
        } finally {
            inner.release();
            frame.release();
        }
    }

    /** The header alone, as the underlay socket sends it, decodes the same way. */
    @Property(tries = 300)
    void encodeThenDecodeTheDatagram(
            @ForAll @IntRange(min = 0, max = 0xFFFFFF) int vni, @ForAll("optionLists") List<Option> options) {
        GeneveHeader sent = new GeneveHeader();
        sent.vni = vni;
        for (Option o : options) {
            ByteBuf data = Unpooled.wrappedBuffer(o.data());
            sent.addOption(o.optionClass(), o.type(), data, o.data().length);
            data.release();
        }
        ByteBuf datagram = Unpooled.buffer();
        try {
            GeneveCodec.encode(sent, datagram);
            datagram.writeInt(0xDEADBEEF);
            GeneveHeader got = new GeneveHeader();
            assertThat(GeneveCodec.decode(datagram, got)).isEqualTo(GeneveDecodeStatus.OK);
            assertThat(got.vni).isEqualTo(vni);
            assertThat(readOptions(got))
                    .usingRecursiveFieldByFieldElementComparator()
                    .isEqualTo(options);
            assertThat(got.payloadLengthBytes).isEqualTo(4);
            assertThat(datagram.getInt(got.payloadOffset)).isEqualTo(0xDEADBEEF);
        } finally {
            datagram.release();
        }
    }

    private static List<Option> readOptions(GeneveHeader h) {
        List<Option> options = new ArrayList<>();
        GeneveOptionCursor cursor = new GeneveOptionCursor().reset(h);
        while (cursor.next()) {
            byte[] data = new byte[cursor.dataLengthBytes()];
            for (int i = 0; i < data.length; i++) {
                data[i] = cursor.dataByte(i);
            }
            assertThat(cursor.isCritical()).isEqualTo(cursor.type() >= 0x80);
            options.add(new Option(cursor.optionClass(), cursor.type(), data));
        }
        return options;
    }
}
