package org.vrdma.vswitch.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class GeneveCodecTest {

    @Test
    void encodesTheRfc8926Layout() {
        GeneveHeader h = new GeneveHeader();
        h.vni = 0xABCDEF;
        h.addOption(0x0103, 0x81, new byte[] {1, 2, 3, 4}, 0, 4);
        ByteBuf out = Unpooled.buffer();
        try {
            GeneveCodec.encode(h, out);
            // ver 0 + 2 option words, C bit (a critical option), TEB, VNI, reserved; then the option:
            // class, type, length 1 word, data.
            assertThat(ByteBufUtil.hexDump(out))
                    .isEqualTo("02" + "40" + "6558" + "abcdef00" + "0103" + "81" + "01" + "01020304");
        } finally {
            out.release();
        }
    }

    @Test
    void decodeReportsTypedErrors() {
        assertThat(decode("0000")).isEqualTo(GeneveDecodeStatus.TRUNCATED);
        assertThat(decode("40006558" + "00000100")).isEqualTo(GeneveDecodeStatus.BAD_VERSION);
        assertThat(decode("01006558" + "00000100"))
                .as("options announced, absent")
                .isEqualTo(GeneveDecodeStatus.TRUNCATED);
        assertThat(decode("01006558" + "00000100" + "01030102"))
                .as("option runs past the area")
                .isEqualTo(GeneveDecodeStatus.BAD_OPTIONS);
        assertThat(decode("00000800" + "00000100")).isEqualTo(GeneveDecodeStatus.UNSUPPORTED_PROTOCOL);
        assertThat(decode("00006558" + "00000100")).isEqualTo(GeneveDecodeStatus.OK);
    }

    @Test
    void addOptionRejectsWhatTheWireCannotCarry() {
        GeneveHeader h = new GeneveHeader();
        assertThatThrownBy(() -> h.addOption(1, 1, new byte[3], 0, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> h.addOption(1, 1, new byte[128], 0, 128)).isInstanceOf(IllegalArgumentException.class);
        h.addOption(1, 1, new byte[124], 0, 124);
        h.addOption(1, 1, new byte[120], 0, 120);
        assertThat(h.optionsLengthBytes()).isEqualTo(GeneveHeader.MAX_OPTIONS_BYTES);
        assertThatThrownBy(() -> h.addOption(1, 1, new byte[0], 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static GeneveDecodeStatus decode(String hex) {
        ByteBuf buf = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex));
        try {
            return GeneveCodec.decode(buf, new GeneveHeader());
        } finally {
            buf.release();
        }
    }
}
