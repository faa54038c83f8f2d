package org.vrdma.wire;

import io.netty.buffer.ByteBuf;

/**
 * Writes and parses the Ethernet II + IPv4 + UDP headers shared by RoCEv2 frames and Geneve
 * underlay frames. Stateless; allocation-free.
 *
 * <p>Frames are untagged Ethernet II; a VLAN-tagged frame decodes as {@link DecodeStatus#NOT_IPV4}.
 */
public final class Ipv4UdpCodec {
    public static final int ETHERNET_HEADER_BYTES = 14;
    public static final int IPV4_HEADER_BYTES = 20;
    public static final int UDP_HEADER_BYTES = 8;
    /** Ethernet + IPv4 (no options) + UDP. */
    public static final int HEADERS_BYTES = ETHERNET_HEADER_BYTES + IPV4_HEADER_BYTES + UDP_HEADER_BYTES;

    public static final int ETHERTYPE_IPV4 = 0x0800;
    public static final int IP_PROTOCOL_UDP = 17;
    /** Largest UDP payload an IPv4 total length of 65535 leaves room for. */
    public static final int MAX_UDP_PAYLOAD_BYTES = 0xFFFF - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;

    private static final int IP_FLAG_DONT_FRAGMENT = 0x4000;
    private static final int IP_FLAG_MORE_FRAGMENTS = 0x2000;
    private static final int IP_FRAGMENT_OFFSET_MASK = 0x1FFF;

    private Ipv4UdpCodec() {}

    /**
     * Appends Ethernet, IPv4 (no options, DF set, header checksum computed) and UDP headers (checksum
     * 0, which IPv4 allows) for a UDP payload of {@code udpPayloadBytes} that the caller writes next.
     * Field values are truncated to their field widths.
     *
     * @throws IllegalArgumentException if the payload does not fit an IPv4 packet
     */
    public static void encode(Ipv4UdpHeaders h, int udpPayloadBytes, ByteBuf out) {
        if (udpPayloadBytes < 0 || udpPayloadBytes > MAX_UDP_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("UDP payload of " + udpPayloadBytes + " bytes does not fit IPv4");
        }
        out.ensureWritable(HEADERS_BYTES);
        // Wide writes, the header checksum summed from the fields: no byte-by-byte writes and no
        // second pass over the header (this runs twice per packet, inner and outer).
        out.writeLong((h.dstMac << 16) | ((h.srcMac >>> 32) & 0xFFFF));
        out.writeInt((int) h.srcMac);
        out.writeShort(ETHERTYPE_IPV4);

        int tos = ((h.dscp & 0x3F) << 2) | (h.ecn & 0b11);
        int totalBytes = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + udpPayloadBytes;
        int ipId = h.ipId & 0xFFFF;
        int ttlProtocol = ((h.ttl & 0xFF) << 8) | IP_PROTOCOL_UDP;
        int sum = ((0x45 << 8) | tos)
                + totalBytes
                + ipId
                + IP_FLAG_DONT_FRAGMENT
                + ttlProtocol
                + (h.srcIp >>> 16)
                + (h.srcIp & 0xFFFF)
                + (h.dstIp >>> 16)
                + (h.dstIp & 0xFFFF);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum += sum >>> 16;
        int checksum = ~sum & 0xFFFF;
        out.writeLong(((long) ((0x45 << 24) | (tos << 16) | totalBytes) << 32)
                | ((ipId << 16) | IP_FLAG_DONT_FRAGMENT) & 0xFFFF_FFFFL);
        out.writeLong(((long) ((ttlProtocol << 16) | checksum) << 32) | (h.srcIp & 0xFFFF_FFFFL));
        out.writeInt(h.dstIp);

        out.writeLong(((long) (h.udpSrcPort & 0xFFFF) << 48)
                | ((long) (h.udpDstPort & 0xFFFF) << 32)
                | ((long) (UDP_HEADER_BYTES + udpPayloadBytes) << 16));
    }

    /**
     * Parses the headers of the frame between {@code frame.readerIndex()} and {@code
     * frame.writerIndex()} into {@code into}, without moving the indexes or retaining the buffer.
     * Bytes after the IPv4 total length (Ethernet padding) are ignored. The UDP checksum is not
     * verified: the kernel checks the underlay's, and the ICRC protects RoCE.
     */
    public static DecodeStatus decode(ByteBuf frame, Ipv4UdpHeaders into) {
        int start = frame.readerIndex();
        int end = frame.writerIndex();
        if (end - start < ETHERNET_HEADER_BYTES) {
            return DecodeStatus.TRUNCATED;
        }
        into.dstMac = frame.getUnsignedMedium(start) * 0x1000000L + frame.getUnsignedMedium(start + 3);
        into.srcMac = frame.getUnsignedMedium(start + 6) * 0x1000000L + frame.getUnsignedMedium(start + 9);
        if (frame.getUnsignedShort(start + 12) != ETHERTYPE_IPV4) {
            return DecodeStatus.NOT_IPV4;
        }
        int ip = start + ETHERNET_HEADER_BYTES;
        if (end - ip < IPV4_HEADER_BYTES) {
            return DecodeStatus.TRUNCATED;
        }
        int versionIhl = frame.getUnsignedByte(ip);
        if ((versionIhl >>> 4) != 4) {
            return DecodeStatus.NOT_IPV4;
        }
        int ipHeaderBytes = (versionIhl & 0x0F) * 4;
        if (ipHeaderBytes < IPV4_HEADER_BYTES) {
            return DecodeStatus.BAD_IP_HEADER;
        }
        if (end - ip < ipHeaderBytes) {
            return DecodeStatus.TRUNCATED;
        }
        int totalBytes = frame.getUnsignedShort(ip + 2);
        if (totalBytes < ipHeaderBytes) {
            return DecodeStatus.BAD_IP_HEADER;
        }
        if (ipv4Checksum(frame, ip, ipHeaderBytes) != 0) {
            return DecodeStatus.BAD_IP_CHECKSUM;
        }
        if (end - ip < totalBytes) {
            return DecodeStatus.TRUNCATED;
        }
        int tos = frame.getUnsignedByte(ip + 1);
        into.dscp = tos >>> 2;
        into.ecn = tos & 0b11;
        into.ipId = frame.getUnsignedShort(ip + 4);
        int flagsFragment = frame.getUnsignedShort(ip + 6);
        if ((flagsFragment & (IP_FLAG_MORE_FRAGMENTS | IP_FRAGMENT_OFFSET_MASK)) != 0) {
            return DecodeStatus.IP_FRAGMENT;
        }
        into.ttl = frame.getUnsignedByte(ip + 8);
        if (frame.getUnsignedByte(ip + 9) != IP_PROTOCOL_UDP) {
            return DecodeStatus.NOT_UDP;
        }
        into.srcIp = frame.getInt(ip + 12);
        into.dstIp = frame.getInt(ip + 16);
        into.ipOffset = ip;
        into.ipHeaderBytes = ipHeaderBytes;

        int udp = ip + ipHeaderBytes;
        int ipPayloadBytes = totalBytes - ipHeaderBytes;
        if (ipPayloadBytes < UDP_HEADER_BYTES) {
            return DecodeStatus.BAD_LENGTH;
        }
        into.udpSrcPort = frame.getUnsignedShort(udp);
        into.udpDstPort = frame.getUnsignedShort(udp + 2);
        int udpBytes = frame.getUnsignedShort(udp + 4);
        if (udpBytes != ipPayloadBytes) {
            return DecodeStatus.BAD_LENGTH;
        }
        into.udpPayloadOffset = udp + UDP_HEADER_BYTES;
        into.udpPayloadBytes = udpBytes - UDP_HEADER_BYTES;
        return DecodeStatus.OK;
    }

    /**
     * The Internet checksum (RFC 1071) of {@code lengthBytes} (even) bytes at {@code index}. Over a
     * header that holds a correct checksum the result is 0.
     */
    public static int ipv4Checksum(ByteBuf buf, int index, int lengthBytes) {
        int sum = 0;
        int i = 0;
        // Four bytes per read: half the buffer accesses of a short-by-short sum.
        for (; i + 4 <= lengthBytes; i += 4) {
            int v = buf.getInt(index + i);
            sum += (v >>> 16) + (v & 0xFFFF);
        }
        if (i < lengthBytes) {
            sum += buf.getUnsignedShort(index + i);
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return ~sum & 0xFFFF;
    }
}
