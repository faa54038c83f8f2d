package org.vrdma.vswitch.wire;

import io.netty.buffer.ByteBuf;
import org.vrdma.wire.DecodeStatus;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Ipv4UdpHeaders;

/**
 * Geneve (RFC 8926) encoding and decoding: the header with its TLV options on its own (the UDP
 * payload the underlay socket sends and receives), and a whole underlay frame, Ethernet + IPv4 +
 * UDP to port 6081 + Geneve + inner frame, for captures.
 *
 * <p>Stateless and allocation-free. Buffer ownership: no method retains or releases a buffer it is
 * given. Decoding moves no index and copies only the options; the inner frame is located by {@link
 * GeneveHeader#payloadOffset} and {@link GeneveHeader#payloadLengthBytes}.
 */
public final class GeneveCodec {
    public static final int GENEVE_UDP_PORT = 6081;

    private static final int VERSION_SHIFT = 6;
    private static final int OPTIONS_LENGTH_MASK = 0x3F;
    private static final int OAM_BIT = 0x80;
    private static final int CRITICAL_BIT = 0x40;
    private static final int MASK_24 = 0xFFFFFF;

    private GeneveCodec() {}

    /**
     * Appends the Geneve header and its options. Writes {@code h.version}, the flags, the protocol
     * type and the VNI (truncated to 24 bits); reserved bits are zero.
     */
    public static void encode(GeneveHeader h, ByteBuf out) {
        out.ensureWritable(h.headerLengthBytes());
        out.writeByte(((h.version & 0b11) << VERSION_SHIFT) | (h.optionsLengthBytes >>> 2));
        out.writeByte((h.oam ? OAM_BIT : 0) | (h.critical ? CRITICAL_BIT : 0));
        out.writeShort(h.protocolType);
        out.writeInt((h.vni & MASK_24) << 8);
        out.writeBytes(h.options, 0, h.optionsLengthBytes);
    }

    /** Bytes of the underlay frame {@link #encapsulate} writes for an inner frame of this size. */
    public static int encapsulatedLength(GeneveHeader h, int innerFrameBytes) {
        return Ipv4UdpCodec.HEADERS_BYTES + h.headerLengthBytes() + innerFrameBytes;
    }

    /**
     * Appends a whole underlay frame: {@code outer}'s Ethernet, IPv4 and UDP headers (destination
     * port set to 6081, UDP checksum 0), the Geneve header, then a copy of the readable bytes of
     * {@code innerFrame}, whose indexes are not moved and which is not released.
     */
    public static void encapsulate(Ipv4UdpHeaders outer, GeneveHeader h, ByteBuf innerFrame, ByteBuf out) {
        int innerBytes = innerFrame.readableBytes();
        out.ensureWritable(encapsulatedLength(h, innerBytes));
        outer.udpDstPort = GENEVE_UDP_PORT;
        Ipv4UdpCodec.encode(outer, h.headerLengthBytes() + innerBytes, out);
        encode(h, out);
        out.writeBytes(innerFrame, innerFrame.readerIndex(), innerBytes);
    }

    /**
     * Decodes the Geneve datagram between {@code datagram.readerIndex()} and {@code
     * datagram.writerIndex()} (a UDP payload) into {@code into}, cleared first. Unknown options are
     * accepted: whether a critical one is known is the receiver's decision. On a status other than
     * {@link GeneveDecodeStatus#OK} the content of {@code into} is unspecified, except that {@link
     * GeneveDecodeStatus#UNSUPPORTED_PROTOCOL} leaves a fully decoded header.
     */
    public static GeneveDecodeStatus decode(ByteBuf datagram, GeneveHeader into) {
        return decode(datagram, datagram.readerIndex(), datagram.writerIndex(), into);
    }

    /**
     * Decodes an underlay frame: Ethernet, IPv4 and UDP into {@code outer}, then the Geneve datagram
     * it carries into {@code into}. The IPv4 header checksum is verified; the UDP checksum is not.
     */
    public static GeneveDecodeStatus decapsulate(ByteBuf frame, Ipv4UdpHeaders outer, GeneveHeader into) {
        outer.clear();
        DecodeStatus ip = Ipv4UdpCodec.decode(frame, outer);
        if (ip != DecodeStatus.OK) {
            return GeneveDecodeStatus.ofUnderlay(ip);
        }
        if (outer.udpDstPort != GENEVE_UDP_PORT) {
            return GeneveDecodeStatus.NOT_GENEVE_PORT;
        }
        int start = outer.udpPayloadOffset;
        return decode(frame, start, start + outer.udpPayloadBytes, into);
    }

    private static GeneveDecodeStatus decode(ByteBuf buf, int start, int end, GeneveHeader into) {
        into.clear();
        if (end - start < GeneveHeader.BASE_HEADER_BYTES) {
            return GeneveDecodeStatus.TRUNCATED;
        }
        int b0 = buf.getUnsignedByte(start);
        into.version = b0 >>> VERSION_SHIFT;
        if (into.version != 0) {
            return GeneveDecodeStatus.BAD_VERSION;
        }
        int optionsBytes = (b0 & OPTIONS_LENGTH_MASK) * 4;
        int b1 = buf.getUnsignedByte(start + 1);
        into.oam = (b1 & OAM_BIT) != 0;
        into.critical = (b1 & CRITICAL_BIT) != 0;
        into.protocolType = buf.getUnsignedShort(start + 2);
        into.vni = buf.getUnsignedMedium(start + 4);
        int optionsStart = start + GeneveHeader.BASE_HEADER_BYTES;
        if (end - optionsStart < optionsBytes) {
            return GeneveDecodeStatus.TRUNCATED;
        }
        // Each option must end within the options area.
        for (int at = 0; at < optionsBytes; ) {
            if (optionsBytes - at < GeneveHeader.OPTION_HEADER_BYTES) {
                return GeneveDecodeStatus.BAD_OPTIONS;
            }
            int dataBytes = (buf.getUnsignedByte(optionsStart + at + 3) & 0x1F) * 4;
            at += GeneveHeader.OPTION_HEADER_BYTES + dataBytes;
            if (at > optionsBytes) {
                return GeneveDecodeStatus.BAD_OPTIONS;
            }
        }
        // Options are whole 4-byte words; read as ints, since getBytes into an array goes through a
        // duplicated NIO buffer (an object per packet) on direct buffers without Unsafe.
        byte[] options = into.options;
        for (int i = 0; i < optionsBytes; i += 4) {
            int word = buf.getInt(optionsStart + i);
            options[i] = (byte) (word >>> 24);
            options[i + 1] = (byte) (word >>> 16);
            options[i + 2] = (byte) (word >>> 8);
            options[i + 3] = (byte) word;
        }
        into.optionsLengthBytes = optionsBytes;
        into.payloadOffset = optionsStart + optionsBytes;
        into.payloadLengthBytes = end - into.payloadOffset;
        if (into.protocolType != GeneveHeader.PROTOCOL_ETHERNET) {
            return GeneveDecodeStatus.UNSUPPORTED_PROTOCOL;
        }
        return GeneveDecodeStatus.OK;
    }
}
