package org.vrdma.vswitch.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.wire.Ipv4UdpHeaders;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceCodec;
import org.vrdma.wire.RoceHeaders;

/** Test data: one Geneve-encapsulated RoCEv2 packet per opcode, written to a pcap file. */
final class OverlayCapture {
    /** What was written for one packet, to compare with what a dissector reports. */
    record Sent(int opcode, int destQp, int psn, int vni, int icrc, int payloadBytes) {}

    static final long FIRST_TIMESTAMP_NS = 1_700_000_000_123_456_789L;
    static final int INT_OPTION_CLASS = 0x0103;

    private OverlayCapture() {}

    static List<Sent> write(Path file, int[] opcodes) throws IOException {
        List<Sent> sent = new ArrayList<>();
        RoceCodec roce = new RoceCodec();
        RoceHeaders h = new RoceHeaders();
        GeneveHeader geneve = new GeneveHeader();
        Ipv4UdpHeaders outer = new Ipv4UdpHeaders();
        try (PcapWriter pcap = PcapWriter.create(file)) {
            for (int i = 0; i < opcodes.length; i++) {
                int op = opcodes[i];
                h.clear();
                h.dstMac = 0x02_00_00_00_00_02L;
                h.srcMac = 0x02_00_00_00_00_01L;
                h.srcIp = 0x0A_00_00_01;
                h.dstIp = 0x0A_00_00_02;
                h.udpSrcPort = 49152 + i;
                h.opcode = op;
                h.destQp = 0x000100 + i;
                h.psn = 0xABC000 + i;
                h.ackRequest = true;
                h.becn = Opcode.isCnp(op);
                h.rethVa = 0x7F00_0000_1000L;
                h.rethRkey = 0x1234;
                h.rethDmaLengthBytes = 4096;
                h.aethMsn = i;
                h.atomicVa = 0x7F00_0000_2000L;
                h.atomicSwapOrAdd = 1;
                h.immDt = 0xCAFE;
                h.dethQkey = 0x11111111;
                h.dethSrcQp = 0x42;
                int payloadBytes = Opcode.hasPayload(op) ? 13 + i : 0;
                ByteBuf payload = Unpooled.buffer(payloadBytes);
                ByteBuf inner = Unpooled.buffer();
                ByteBuf frame = Unpooled.buffer();
                try {
                    for (int b = 0; b < payloadBytes; b++) {
                        payload.writeByte(b);
                    }
                    roce.encode(h, payload, inner);
                    int icrc = inner.getIntLE(inner.writerIndex() - 4);

                    geneve.clear();
                    geneve.vni = 0x10000 + i;
                    if (i % 2 == 1) {
                        geneve.addOption(INT_OPTION_CLASS, 0x01, new byte[] {0, 0, 0, 1, 0, 0, 0, (byte) i}, 0, 8);
                    }
                    outer.clear();
                    outer.dstMac = 0x02_AA_00_00_00_02L;
                    outer.srcMac = 0x02_AA_00_00_00_01L;
                    outer.srcIp = 0xC0_A8_00_01;
                    outer.dstIp = 0xC0_A8_00_02;
                    outer.udpSrcPort = 32768 + i;
                    GeneveCodec.encapsulate(outer, geneve, inner, frame);
                    pcap.write(FIRST_TIMESTAMP_NS + i * 1_000L, frame);
                    sent.add(new Sent(op, h.destQp, h.psn, geneve.vni, icrc, payloadBytes));
                } finally {
                    payload.release();
                    inner.release();
                    frame.release();
                }
            }
        }
        return sent;
    }
}
