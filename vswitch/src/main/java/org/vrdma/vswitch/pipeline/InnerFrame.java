package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Ipv4UdpHeaders;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceCodec;

/**
 * What the switch needs to know of an inner Ethernet/IPv4 frame (addresses, protocol, ports, ECN,
 * RoCE opcode) and where its IPv4 header sits, parsed in place without allocating. A reusable
 * holder, confined to one thread; it never retains the buffer.
 *
 * <p>{@link #parse} validates (the vSwitch's input check); {@link #peek} only locates and
 * classifies an already validated frame (what egress queues do).
 */
public final class InnerFrame {
    public static final int ETHERNET_HEADER_BYTES = 14;
    public static final int PROTOCOL_ICMP = 1;
    public static final int PROTOCOL_TCP = 6;
    public static final int PROTOCOL_UDP = 17;

    /** Traffic class of RoCEv2 (UDP destination port 4791). */
    public static final int CLASS_RDMA = 0;
    /** Traffic class of everything else (TCP/IP). */
    public static final int CLASS_TCP = 1;

    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int MF_OR_OFFSET = 0x3FFF;

    public long dstMac;
    public long srcMac;
    public int srcIp;
    public int dstIp;
    public int protocol;
    /** TCP/UDP source port, 0 for other protocols. */
    public int srcPort;
    /** TCP/UDP destination port, 0 for other protocols. */
    public int dstPort;
    /** ECN codepoint of the IPv4 TOS byte. */
    public int ecn;
    /** Absolute index of the IPv4 header in the parsed buffer. */
    public int ipOffset;

    public int ipHeaderBytes;
    /** IPv4 total length (after {@link #parse}): the frame ends at {@code ipOffset + ipTotalBytes}. */
    public int ipTotalBytes;
    /** True for UDP to port 4791 with a BTH present. */
    public boolean roce;
    /** BTH opcode when {@link #roce}, else -1. */
    public int opcode;

    /**
     * Validates and parses the frame in {@code [start, end)} of {@code buf}.
     *
     * @return null when the frame is a well-formed IPv4 packet, otherwise why it must be dropped
     */
    public DropReason parse(ByteBuf buf, int start, int end) {
        roce = false;
        opcode = -1;
        srcPort = 0;
        dstPort = 0;
        if (end - start < ETHERNET_HEADER_BYTES + Ipv4UdpCodec.IPV4_HEADER_BYTES) {
            return end - start >= ETHERNET_HEADER_BYTES && buf.getUnsignedShort(start + 12) != ETHERTYPE_IPV4
                    ? DropReason.NOT_IPV4
                    : DropReason.MALFORMED_INNER;
        }
        dstMac = buf.getUnsignedMedium(start) * 0x1000000L + buf.getUnsignedMedium(start + 3);
        srcMac = buf.getUnsignedMedium(start + 6) * 0x1000000L + buf.getUnsignedMedium(start + 9);
        if (buf.getUnsignedShort(start + 12) != ETHERTYPE_IPV4) {
            return DropReason.NOT_IPV4;
        }
        int ip = start + ETHERNET_HEADER_BYTES;
        int versionIhl = buf.getUnsignedByte(ip);
        if ((versionIhl >>> 4) != 4) {
            return DropReason.NOT_IPV4;
        }
        int ihl = (versionIhl & 0x0F) * 4;
        int total = buf.getUnsignedShort(ip + 2);
        if (ihl < Ipv4UdpCodec.IPV4_HEADER_BYTES || total < ihl || ip + total > end) {
            return DropReason.MALFORMED_INNER;
        }
        if (Ipv4UdpCodec.ipv4Checksum(buf, ip, ihl) != 0) {
            return DropReason.MALFORMED_INNER;
        }
        if ((buf.getUnsignedShort(ip + 6) & MF_OR_OFFSET) != 0) {
            // Fragments carry no ports for security groups to check, and RoCEv2 is never fragmented.
            return DropReason.MALFORMED_INNER;
        }
        ipOffset = ip;
        ipHeaderBytes = ihl;
        ipTotalBytes = total;
        ecn = buf.getUnsignedByte(ip + 1) & 0b11;
        protocol = buf.getUnsignedByte(ip + 9);
        srcIp = buf.getInt(ip + 12);
        dstIp = buf.getInt(ip + 16);
        int l4 = ip + ihl;
        int l4Bytes = total - ihl;
        if (protocol == PROTOCOL_TCP || protocol == PROTOCOL_UDP) {
            if (l4Bytes < (protocol == PROTOCOL_TCP ? 20 : Ipv4UdpCodec.UDP_HEADER_BYTES)) {
                return DropReason.MALFORMED_INNER;
            }
            srcPort = buf.getUnsignedShort(l4);
            dstPort = buf.getUnsignedShort(l4 + 2);
            if (protocol == PROTOCOL_UDP) {
                if (buf.getUnsignedShort(l4 + 4) != l4Bytes) {
                    return DropReason.MALFORMED_INNER;
                }
                if (dstPort == RoceCodec.ROCE_V2_UDP_PORT
                        && l4Bytes >= Ipv4UdpCodec.UDP_HEADER_BYTES + RoceCodec.BTH_BYTES) {
                    roce = true;
                    opcode = buf.getUnsignedByte(l4 + Ipv4UdpCodec.UDP_HEADER_BYTES);
                }
            }
        }
        return null;
    }

    /**
     * Locates the IPv4 header and reads ECN, protocol, ports and opcode of a frame known to be valid
     * (no checksum or length validation beyond staying inside the buffer).
     *
     * @return false when the frame is not IPv4 or too short to classify
     */
    public boolean peek(ByteBuf buf, int start, int end) {
        roce = false;
        opcode = -1;
        dstPort = 0;
        if (start < 0
                || end - start < ETHERNET_HEADER_BYTES + Ipv4UdpCodec.IPV4_HEADER_BYTES
                || buf.getUnsignedShort(start + 12) != ETHERTYPE_IPV4) {
            return false;
        }
        int ip = start + ETHERNET_HEADER_BYTES;
        int versionIhl = buf.getUnsignedByte(ip);
        int ihl = (versionIhl & 0x0F) * 4;
        if ((versionIhl >>> 4) != 4 || ihl < Ipv4UdpCodec.IPV4_HEADER_BYTES || ip + ihl > end) {
            return false;
        }
        ipOffset = ip;
        ipHeaderBytes = ihl;
        ecn = buf.getUnsignedByte(ip + 1) & 0b11;
        protocol = buf.getUnsignedByte(ip + 9);
        int l4 = ip + ihl;
        if (protocol == PROTOCOL_UDP && l4 + Ipv4UdpCodec.UDP_HEADER_BYTES + 1 <= end) {
            dstPort = buf.getUnsignedShort(l4 + 2);
            if (dstPort == RoceCodec.ROCE_V2_UDP_PORT) {
                roce = true;
                opcode = buf.getUnsignedByte(l4 + Ipv4UdpCodec.UDP_HEADER_BYTES);
            }
        }
        return true;
    }

    /** {@link #CLASS_RDMA} for RoCEv2 (UDP 4791), {@link #CLASS_TCP} for everything else. */
    public int trafficClass() {
        return protocol == PROTOCOL_UDP && dstPort == RoceCodec.ROCE_V2_UDP_PORT ? CLASS_RDMA : CLASS_TCP;
    }

    /** RoCE ACK/NAK, atomic ACK and CNP: the packets congestion control and loss recovery react to. */
    public boolean isControl() {
        return roce && isControlOpcode(opcode);
    }

    /** ECT(0), ECT(1) or already CE. */
    public boolean isEcnCapable() {
        return ecn != Ipv4UdpHeaders.NOT_ECT;
    }

    public static boolean isControlOpcode(int opcode) {
        return opcode == Opcode.RC_ACKNOWLEDGE || opcode == Opcode.RC_ATOMIC_ACKNOWLEDGE || opcode == Opcode.CNP;
    }

    /**
     * Sets ECN to CE in the IPv4 header at {@code ipOffset} and rewrites its header checksum. The
     * RoCE ICRC masks the TOS byte and the checksum, so it stays valid.
     */
    public static void markCe(ByteBuf buf, int ipOffset, int ipHeaderBytes) {
        buf.setByte(ipOffset + 1, buf.getUnsignedByte(ipOffset + 1) | Ipv4UdpHeaders.CE);
        buf.setShort(ipOffset + 10, 0);
        buf.setShort(ipOffset + 10, Ipv4UdpCodec.ipv4Checksum(buf, ipOffset, ipHeaderBytes));
    }
}
