package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;

/**
 * A transport-level description of one RoCEv2 packet: addressing, BTH and the extension headers the
 * opcode needs, and a view of the payload. A {@link PacketCodec} turns it into a frame and back. It
 * is a reusable holder: engines keep one for sending and one for receiving, so nothing is allocated
 * per packet.
 *
 * <p>Selective repeat uses one extension of the RoCE header semantics: a PSN sequence error NAK
 * carries, in the AETH MSN field, the PSN of the out-of-order packet that triggered it (a selective
 * acknowledgement), or a PSN before the NAKed one when it acknowledges nothing.
 */
public final class TransportPacket {
    /** ECN codepoints of the IPv4 header. */
    public static final int ECN_NOT_ECT = 0;

    public static final int ECN_ECT1 = 1;
    public static final int ECN_ECT0 = 2;
    public static final int ECN_CE = 3;

    public long srcMac;
    public long dstMac;
    public int srcIpv4;
    public int dstIpv4;
    /** DSCP of the IPv4 traffic class byte (6 bits). */
    public int dscp;
    /** ECN bits of the IPv4 header. */
    public int ecn;
    /** UDP source port: flow entropy derived from the QP. */
    public int udpSrcPort;

    // BTH
    public int opcode;
    public boolean solicited;
    public int pkey = 0xFFFF;
    public int destQp;
    public boolean ackReq;
    public int psn;

    // RETH
    public long rethVa;
    public int rethRkey;
    public int rethLength;

    // AETH
    public int aethSyndrome;
    public int aethMsn;

    // AtomicETH
    public long atomicVa;
    public int atomicRkey;
    public long atomicSwapOrAdd;
    public long atomicCompare;

    // AtomicAckETH
    public long atomicOriginal;

    // ImmDt (host order value)
    public int immData;

    // IETH: the rkey a SEND with Invalidate invalidates at the responder
    public int iethRkey;

    // DETH
    public int dethQkey;
    public int dethSrcQp;

    /**
     * Buffer holding the payload at {@link #payloadIndex} for {@link #payloadLength} bytes: on receive
     * the frame itself (valid only while the frame is), on send the bytes to encode. Never released
     * through this field, and its indexes are never moved.
     */
    public ByteBuf payload;

    public int payloadIndex;
    public int payloadLength;

    /**
     * On send, instead of {@link #payload}: the codec gathers {@link #payloadLength} bytes from here,
     * starting at message offset {@link #payloadSourceOffset}, directly into the frame.
     */
    public PayloadSource payloadSource;

    public long payloadSourceOffset;

    /** Resets every field to its default, so a holder can be reused for a new packet. */
    public TransportPacket clear() {
        srcMac = 0;
        dstMac = 0;
        srcIpv4 = 0;
        dstIpv4 = 0;
        dscp = 0;
        ecn = ECN_NOT_ECT;
        udpSrcPort = 0;
        opcode = 0;
        solicited = false;
        pkey = 0xFFFF;
        destQp = 0;
        ackReq = false;
        psn = 0;
        rethVa = 0;
        rethRkey = 0;
        rethLength = 0;
        aethSyndrome = 0;
        aethMsn = 0;
        atomicVa = 0;
        atomicRkey = 0;
        atomicSwapOrAdd = 0;
        atomicCompare = 0;
        atomicOriginal = 0;
        immData = 0;
        iethRkey = 0;
        dethQkey = 0;
        dethSrcQp = 0;
        payload = null;
        payloadIndex = 0;
        payloadLength = 0;
        payloadSource = null;
        payloadSourceOffset = 0;
        return this;
    }

    /** Payload length in bytes (0 without payload). */
    public int payloadLength() {
        return payloadLength;
    }

    /** Sets the payload to the readable bytes of {@code buf}. */
    public void payload(final ByteBuf buf) {
        payload = buf;
        payloadIndex = buf.readerIndex();
        payloadLength = buf.readableBytes();
        payloadSource = null;
    }

    /** Sets the payload to {@code lengthBytes} bytes of {@code source} from {@code offset}, gathered at encode. */
    public void payload(final PayloadSource source, final long offset, final int lengthBytes) {
        payload = null;
        payloadIndex = 0;
        payloadLength = lengthBytes;
        payloadSource = source;
        payloadSourceOffset = offset;
    }

    @Override
    public String toString() {
        return "TransportPacket{op=0x" + Integer.toHexString(opcode) + ", destQp=" + destQp + ", psn=" + psn
                + ", ackReq=" + ackReq + ", len=" + payloadLength() + ", syndrome=0x"
                + Integer.toHexString(aethSyndrome) + ", msn=" + aethMsn + '}';
    }
}
