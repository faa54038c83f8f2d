package org.vrdma.wire;

/**
 * Mutable, reusable holder of the Ethernet II, IPv4 and UDP fields of a frame. Encoders read it;
 * decoders fill it, including where the UDP payload sits in the decoded buffer.
 *
 * <p>A plain data holder: not thread-safe, meant to be reused for every packet of one event loop.
 */
public class Ipv4UdpHeaders {
    /** ECN codepoint: not ECN-capable transport. */
    public static final int NOT_ECT = 0b00;
    /** ECN codepoint ECT(1). */
    public static final int ECT1 = 0b01;
    /** ECN codepoint ECT(0): what RoCEv2 data is sent with. */
    public static final int ECT0 = 0b10;
    /** ECN codepoint: congestion experienced, set by a congested queue. */
    public static final int CE = 0b11;

    public static final int DEFAULT_TTL = 64;

    /** Destination MAC address in the low 48 bits. */
    public long dstMac;
    /** Source MAC address in the low 48 bits. */
    public long srcMac;
    /** IPv4 source address, network order in the int (10.0.0.1 is 0x0A000001). */
    public int srcIp;

    public int dstIp;
    /** Differentiated services code point, 6 bits. */
    public int dscp;
    /** ECN codepoint, 2 bits: {@link #NOT_ECT}, {@link #ECT0}, {@link #ECT1} or {@link #CE}. */
    public int ecn;

    public int ttl;
    /** IPv4 identification, 16 bits. */
    public int ipId;
    /** UDP source port; RoCEv2 and Geneve use it as flow entropy for ECMP. */
    public int udpSrcPort;

    public int udpDstPort;

    /** After decode: absolute index of the IPv4 header in the decoded buffer. */
    public int ipOffset;
    /** After decode: IPv4 header length in bytes (20 unless options are present). */
    public int ipHeaderBytes;
    /** After decode: absolute index of the UDP payload in the decoded buffer. */
    public int udpPayloadOffset;
    /** After decode: UDP payload length in bytes, as the UDP header gives it. */
    public int udpPayloadBytes;

    public Ipv4UdpHeaders() {
        clear();
    }

    /** Resets every field to its default: zero, except TTL {@value #DEFAULT_TTL}. */
    public void clear() {
        dstMac = 0;
        srcMac = 0;
        srcIp = 0;
        dstIp = 0;
        dscp = 0;
        ecn = NOT_ECT;
        ttl = DEFAULT_TTL;
        ipId = 0;
        udpSrcPort = 0;
        udpDstPort = 0;
        ipOffset = 0;
        ipHeaderBytes = 0;
        udpPayloadOffset = 0;
        udpPayloadBytes = 0;
    }
}
