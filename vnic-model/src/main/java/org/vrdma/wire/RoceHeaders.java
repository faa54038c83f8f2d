package org.vrdma.wire;

/**
 * Mutable, reusable holder of every header field of a RoCEv2 frame: Ethernet, IPv4 and UDP (from
 * {@link Ipv4UdpHeaders}), the BTH and the extension headers, and after decode where the payload
 * sits. Fields of extension headers the opcode does not carry are ignored by encode and left at
 * their defaults by decode.
 *
 * <p>A plain data holder, allocated once and reused for every packet; not thread-safe.
 */
public final class RoceHeaders extends Ipv4UdpHeaders {
    /** The default partition key (full membership, default partition). */
    public static final int DEFAULT_PKEY = 0xFFFF;

    // BTH
    /** BTH opcode, see {@link Opcode}. */
    public int opcode;

    public boolean solicitedEvent;
    public boolean migReq;
    /** Pad bytes after the payload (0..3); encode computes it from the payload length. */
    public int padCount;
    /** BTH transport header version; 0 is the only one defined. */
    public int transportVersion;
    /** Partition key, 16 bits. */
    public int pkey;
    /** Forward ECN bit of BTH byte 4; variant (not covered by the ICRC). */
    public boolean fecn;
    /** Backward ECN bit of BTH byte 4; variant. A CNP sets it. */
    public boolean becn;
    /** Destination queue pair number, 24 bits. */
    public int destQp;

    public boolean ackRequest;
    /** Packet sequence number, 24 bits. */
    public int psn;

    // RETH
    public long rethVa;
    public int rethRkey;
    public int rethDmaLengthBytes;

    // AETH
    /** AETH syndrome: ACK, RNR NAK or NAK with its code, 8 bits. */
    public int aethSyndrome;
    /** Message sequence number, 24 bits. */
    public int aethMsn;

    // AtomicETH
    public long atomicVa;
    public int atomicRkey;
    public long atomicSwapOrAdd;
    public long atomicCompare;

    // AtomicAckETH
    public long atomicAckOriginalData;

    // ImmDt
    public int immDt;

    // IETH
    /** The rkey a SEND with invalidate invalidates. */
    public int iethRkey;

    // DETH
    public int dethQkey;
    /** Source queue pair number of a UD datagram, 24 bits. */
    public int dethSrcQp;

    /** After decode: absolute index of the payload in the decoded buffer. */
    public int payloadOffset;
    /** After decode: payload length in bytes, pad excluded. */
    public int payloadLengthBytes;

    public RoceHeaders() {
        clear();
    }

    /**
     * Resets every field to its default: zero, except TTL 64, ECN {@link #ECT0}, UDP destination
     * port 4791 and the default partition key.
     */
    @Override
    public void clear() {
        super.clear();
        ecn = ECT0;
        udpDstPort = RoceCodec.ROCE_V2_UDP_PORT;
        opcode = 0;
        solicitedEvent = false;
        migReq = false;
        padCount = 0;
        transportVersion = 0;
        pkey = DEFAULT_PKEY;
        fecn = false;
        becn = false;
        destQp = 0;
        ackRequest = false;
        psn = 0;
        rethVa = 0;
        rethRkey = 0;
        rethDmaLengthBytes = 0;
        aethSyndrome = 0;
        aethMsn = 0;
        atomicVa = 0;
        atomicRkey = 0;
        atomicSwapOrAdd = 0;
        atomicCompare = 0;
        atomicAckOriginalData = 0;
        immDt = 0;
        iethRkey = 0;
        dethQkey = 0;
        dethSrcQp = 0;
        payloadOffset = 0;
        payloadLengthBytes = 0;
    }
}
