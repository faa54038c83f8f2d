package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Ipv4UdpHeaders;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceCodec;
import org.vrdma.wire.RoceHeaders;

/** Test frames: RoCEv2 and TCP inner frames with headroom, payload bytes derived from a sequence number. */
public final class Frames {
    public static final int HEADROOM = 256;

    private static final RoceCodec ROCE = new RoceCodec();

    private Frames() {}

    /** An endpoint of a test VPC. */
    public record Endpoint(long mac, int ip) {
        public static Endpoint of(long mac, String ip) {
            return new Endpoint(mac, UnderlayAddress.parseIpv4(ip));
        }
    }

    /** A RoCEv2 frame with ECT(0), opcode {@code opcode}, PSN = seq, payload filled from seq. */
    public static ByteBuf roce(
            ByteBufAllocator alloc, Endpoint src, Endpoint dst, int opcode, int payloadBytes, int seq) {
        RoceHeaders h = new RoceHeaders();
        h.srcMac = src.mac();
        h.dstMac = dst.mac();
        h.srcIp = src.ip();
        h.dstIp = dst.ip();
        h.udpSrcPort = 49152 + (seq & 0xFF);
        h.opcode = opcode;
        h.destQp = 0x11;
        h.psn = seq & 0xFFFFFF;
        h.becn = Opcode.isCnp(opcode);
        h.rethVa = 0x1000;
        h.rethRkey = 7;
        h.rethDmaLengthBytes = payloadBytes;
        int pay = Opcode.hasPayload(opcode) ? payloadBytes : 0;
        ByteBuf payload = Unpooled.buffer(pay);
        fill(payload, pay, seq);
        ByteBuf frame = alloc.directBuffer(HEADROOM + RoceCodec.frameLength(h, pay));
        frame.writerIndex(HEADROOM).readerIndex(HEADROOM);
        ROCE.encode(h, payload, frame);
        payload.release();
        return frame;
    }

    /** An IPv4/TCP frame (20-byte TCP header, no options) to {@code dstPort}, not ECN-capable. */
    public static ByteBuf tcp(
            ByteBufAllocator alloc, Endpoint src, Endpoint dst, int dstPort, int payloadBytes, int seq) {
        ByteBuf f = alloc.directBuffer(HEADROOM + 54 + payloadBytes);
        f.writerIndex(HEADROOM).readerIndex(HEADROOM);
        f.writeMedium((int) (dst.mac() >>> 24)).writeMedium((int) dst.mac());
        f.writeMedium((int) (src.mac() >>> 24)).writeMedium((int) src.mac());
        f.writeShort(0x0800);
        int ip = f.writerIndex();
        f.writeByte(0x45)
                .writeByte(0)
                .writeShort(20 + 20 + payloadBytes)
                .writeShort(seq)
                .writeShort(0x4000);
        f.writeByte(64).writeByte(6).writeShort(0).writeInt(src.ip()).writeInt(dst.ip());
        f.setShort(ip + 10, Ipv4UdpCodec.ipv4Checksum(f, ip, 20));
        f.writeShort(40000)
                .writeShort(dstPort)
                .writeInt(seq)
                .writeInt(0)
                .writeShort(0x5010)
                .writeShort(65535);
        f.writeShort(0).writeShort(0);
        fill(f, payloadBytes, seq);
        return f;
    }

    private static void fill(ByteBuf out, int bytes, int seq) {
        // One bulk write: the leak detector records every buffer access at paranoid level.
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            b[i] = (byte) (seq * 31 + i);
        }
        out.writeBytes(b);
    }

    /** Readable bytes of a frame. */
    public static byte[] bytes(ByteBuf frame) {
        byte[] b = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), b);
        return b;
    }

    /** Decodes a RoCE frame's headers (status OK expected by callers). */
    public static RoceHeaders decodeRoce(ByteBuf frame) {
        RoceHeaders h = new RoceHeaders();
        if (ROCE.decode(frame, h) != org.vrdma.wire.DecodeStatus.OK) {
            throw new AssertionError("not a valid RoCE frame: " + ROCE.decode(frame, h));
        }
        return h;
    }

    static int ecn(ByteBuf frame) {
        return frame.getUnsignedByte(frame.readerIndex() + 15) & Ipv4UdpHeaders.CE;
    }
}
