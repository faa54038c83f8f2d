package org.vrdma.vswitch.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class PcapWriterTest {

    @Test
    void writesTheLibpcapHeaderAndRecordsWithCallerTimestamps() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump("00112233445566778899aabbccdd"));
        try (PcapWriter w = new PcapWriter(bytes, PcapWriter.Resolution.NANOSECONDS, 10)) {
            w.write(3_000_000_123L, frame);
            assertThat(frame.readerIndex()).isZero();
        } finally {
            frame.release();
        }
        ByteBuffer b = ByteBuffer.wrap(bytes.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.getInt()).isEqualTo(0xA1B23C4D);
        assertThat(b.getShort()).isEqualTo((short) 2);
        assertThat(b.getShort()).isEqualTo((short) 4);
        assertThat(b.getInt()).isZero();
        assertThat(b.getInt()).isZero();
        assertThat(b.getInt()).as("snap length").isEqualTo(10);
        assertThat(b.getInt()).as("link type Ethernet").isEqualTo(1);
        assertThat(b.getInt()).as("seconds").isEqualTo(3);
        assertThat(b.getInt()).as("nanoseconds").isEqualTo(123);
        assertThat(b.getInt()).as("captured length, cut to the snap length").isEqualTo(10);
        assertThat(b.getInt()).as("original length").isEqualTo(14);
        assertThat(b.remaining()).isEqualTo(10);
    }

    @Test
    void microsecondFilesUseTheirMagicAndUnits() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PcapWriter w = new PcapWriter(bytes, PcapWriter.Resolution.MICROSECONDS, 65535)) {
            w.write(5_000_123_999L, new byte[] {1, 2, 3}, 0, 3);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.getInt(0)).isEqualTo(0xA1B2C3D4);
        assertThat(b.getInt(24)).isEqualTo(5);
        assertThat(b.getInt(28)).as("microseconds, truncated").isEqualTo(123);
        assertThat(b.getInt(32)).isEqualTo(3);
        assertThat(bytes.size()).isEqualTo(24 + 16 + 3);
    }
}
