package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;

/**
 * An Ethernet ARP packet for IPv4 (RFC 826), parsed in place without allocating, and the writer of
 * the switch's proxy replies. A reusable holder confined to one thread; it never retains the buffer.
 */
public final class ArpPacket {
    public static final int ETHERTYPE_ARP = 0x0806;
    /** Ethernet header plus the 28-byte ARP body for IPv4 over Ethernet. */
    public static final int FRAME_BYTES = InnerFrame.ETHERNET_HEADER_BYTES + 28;
    /** The shortest Ethernet frame without its FCS: replies are padded to it. */
    public static final int MIN_FRAME_BYTES = 60;

    public static final int REQUEST = 1;
    public static final int REPLY = 2;

    private static final int HTYPE_ETHERNET = 1;
    private static final int PTYPE_IPV4 = 0x0800;

    public long ethSrcMac;
    public int operation;
    public long senderMac;
    public int senderIp;
    public long targetMac;
    public int targetIp;

    /** Whether the frame in {@code [start, end)} carries ethertype ARP (it may still be malformed). */
    public static boolean isArp(ByteBuf buf, int start, int end) {
        return end - start >= InnerFrame.ETHERNET_HEADER_BYTES && buf.getUnsignedShort(start + 12) == ETHERTYPE_ARP;
    }

    /**
     * Parses an ARP frame.
     *
     * @return false when it is not ARP for IPv4 over Ethernet or is truncated
     */
    public boolean parse(ByteBuf buf, int start, int end) {
        if (end - start < FRAME_BYTES || buf.getUnsignedShort(start + 12) != ETHERTYPE_ARP) {
            return false;
        }
        int a = start + InnerFrame.ETHERNET_HEADER_BYTES;
        if (buf.getUnsignedShort(a) != HTYPE_ETHERNET
                || buf.getUnsignedShort(a + 2) != PTYPE_IPV4
                || buf.getUnsignedByte(a + 4) != 6
                || buf.getUnsignedByte(a + 5) != 4) {
            return false;
        }
        ethSrcMac = mac(buf, start + 6);
        operation = buf.getUnsignedShort(a + 6);
        senderMac = mac(buf, a + 8);
        senderIp = buf.getInt(a + 14);
        targetMac = mac(buf, a + 18);
        targetIp = buf.getInt(a + 24);
        return true;
    }

    /** A gratuitous ARP announces the sender's own address (target = sender). */
    public boolean isGratuitous() {
        return senderIp == targetIp;
    }

    /**
     * Writes the reply to this request: "{@link #targetIp} is at {@code answerMac}", addressed to the
     * requester, padded to {@link #MIN_FRAME_BYTES}.
     */
    public void writeReply(ByteBuf out, long answerMac) {
        writeMac(out, senderMac);
        writeMac(out, answerMac);
        out.writeShort(ETHERTYPE_ARP);
        out.writeShort(HTYPE_ETHERNET).writeShort(PTYPE_IPV4).writeByte(6).writeByte(4);
        out.writeShort(REPLY);
        writeMac(out, answerMac);
        out.writeInt(targetIp);
        writeMac(out, senderMac);
        out.writeInt(senderIp);
        out.writeZero(MIN_FRAME_BYTES - FRAME_BYTES);
    }

    /** Writes a request from {@code mac}/{@code ip} for {@code targetIp}, broadcast (tests, probes). */
    public static void writeRequest(ByteBuf out, long mac, int ip, int targetIp) {
        writeMac(out, 0xFFFF_FFFF_FFFFL);
        writeMac(out, mac);
        out.writeShort(ETHERTYPE_ARP);
        out.writeShort(HTYPE_ETHERNET).writeShort(PTYPE_IPV4).writeByte(6).writeByte(4);
        out.writeShort(REQUEST);
        writeMac(out, mac);
        out.writeInt(ip);
        writeMac(out, 0);
        out.writeInt(targetIp);
    }

    static long mac(ByteBuf buf, int index) {
        return buf.getUnsignedMedium(index) * 0x100_0000L + buf.getUnsignedMedium(index + 3);
    }

    static void writeMac(ByteBuf out, long mac) {
        out.writeMedium((int) (mac >>> 24)).writeMedium((int) mac);
    }
}
