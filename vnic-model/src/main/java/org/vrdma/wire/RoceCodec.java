package org.vrdma.wire;

import io.netty.buffer.ByteBuf;

/**
 * Encodes and decodes complete RoCEv2 frames: Ethernet II, IPv4, UDP to port 4791, BTH, the
 * extension headers the opcode requires, payload, pad to a 4-byte multiple, ICRC.
 *
 * <p>Buffer ownership: neither method retains or releases a buffer it is given; the caller keeps
 * ownership of the payload, the output buffer and the decoded frame. Decode moves no index and
 * copies nothing: it records where the payload sits, so {@code frame.slice(h.payloadOffset,
 * h.payloadLengthBytes)} is the payload.
 *
 * <p>Not thread-safe (it holds an {@link Icrc}): one instance per event loop. Neither method
 * allocates (Netty itself may, when copying a heap payload into a direct buffer without {@code
 * sun.misc.Unsafe}).
 */
public final class RoceCodec {
    public static final int ROCE_V2_UDP_PORT = 4791;
    public static final int BTH_BYTES = 12;

    private static final int BTH_SE = 0x80;
    private static final int BTH_MIGREQ = 0x40;
    private static final int BTH_FECN = 0x80;
    private static final int BTH_BECN = 0x40;
    private static final int BTH_ACK_REQ = 0x80;
    private static final int MASK_24 = 0xFFFFFF;

    private final Icrc icrc = new Icrc();
    /** False: the ICRC field is left unwritten on encode and not checked on decode. */
    private final boolean icrcChecked;
    /** False: the ICRC is written on encode but not checked on decode (see the constructor). */
    private final boolean icrcVerified;

    public RoceCodec() {
        this(true);
    }

    /**
     * @param icrcChecked false for frames whose payload bytes are not modelled (simulations that
     *     carry only the payload's length): the ICRC, a checksum over those bytes, is then neither
     *     computed nor checked, and encode never touches the frame past its headers
     */
    public RoceCodec(boolean icrcChecked) {
        this(icrcChecked, icrcChecked);
    }

    /**
     * @param icrcChecked as {@link #RoceCodec(boolean)}
     * @param icrcVerified false to write the ICRC on encode but not check it on decode: for a
     *     receiver behind an underlay that already checksums every byte of the frame (the outer UDP
     *     checksum of a Geneve datagram, checked by the receiving kernel or NIC before the datagram
     *     reaches the socket), where the check is a second pass over each payload that can only
     *     agree. Frames sent stay valid for any other receiver and for captures.
     */
    public RoceCodec(boolean icrcChecked, boolean icrcVerified) {
        this.icrcChecked = icrcChecked;
        this.icrcVerified = icrcChecked && icrcVerified;
    }

    /** Whether decode checks the ICRC. */
    public boolean icrcVerified() {
        return icrcVerified;
    }

    /**
     * Bytes of the frame {@link #encode} writes for these headers and a payload of {@code
     * payloadBytes}.
     */
    public static int frameLength(RoceHeaders h, int payloadBytes) {
        return Ipv4UdpCodec.HEADERS_BYTES + udpPayloadBytes(h.opcode, payloadBytes);
    }

    private static int udpPayloadBytes(int opcode, int payloadBytes) {
        return BTH_BYTES
                + Opcode.extensionHeaderBytes(opcode)
                + payloadBytes
                + padBytes(payloadBytes)
                + Icrc.ICRC_BYTES;
    }

    private static int padBytes(int payloadBytes) {
        return -payloadBytes & 3;
    }

    /**
     * Appends the frame to {@code out}. Sets {@code h.padCount} and {@code h.udpDstPort} (4791); other
     * fields are read and truncated to their field widths.
     *
     * @param payload the readable bytes are the payload, or null for none; its indexes are not moved,
     *     and it is not released
     * @throws IllegalArgumentException for an unknown opcode, a payload on an opcode that carries none,
     *     or a frame larger than an IPv4 packet
     */
    public void encode(RoceHeaders h, ByteBuf payload, ByteBuf out) {
        int payloadBytes = payload == null ? 0 : payload.readableBytes();
        int ipOffset = encodeHeaders(h, payloadBytes, out);
        if (payloadBytes != 0) {
            out.writeBytes(payload, payload.readerIndex(), payloadBytes);
        }
        encodeTrailer(h, payloadBytes, ipOffset, out);
    }

    /**
     * The first half of {@link #encode}: appends everything before the payload (Ethernet, IPv4,
     * UDP, BTH, extension headers) for a payload of {@code payloadBytes}, which the caller then
     * appends itself before {@link #encodeTrailer}. Sets {@code h.padCount} and {@code h.udpDstPort}.
     *
     * @return the absolute index of the IPv4 header, for {@link #encodeTrailer}
     * @throws IllegalArgumentException as {@link #encode}
     */
    public int encodeHeaders(RoceHeaders h, int payloadBytes, ByteBuf out) {
        int op = h.opcode;
        if (!Opcode.isValid(op)) {
            throw new IllegalArgumentException("unknown opcode " + op);
        }
        if (payloadBytes != 0 && !Opcode.hasPayload(op)) {
            throw new IllegalArgumentException(Opcode.name(op) + " carries no payload");
        }
        int pad = padBytes(payloadBytes);
        h.padCount = pad;
        h.udpDstPort = ROCE_V2_UDP_PORT;
        int udpPayloadBytes = udpPayloadBytes(op, payloadBytes);
        out.ensureWritable(Ipv4UdpCodec.HEADERS_BYTES + udpPayloadBytes);
        int ipOffset = out.writerIndex() + Ipv4UdpCodec.ETHERNET_HEADER_BYTES;
        Ipv4UdpCodec.encode(h, udpPayloadBytes, out);

        // BTH as three wide writes: opcode, flags, P_Key | F/B, destination QP | A, PSN.
        out.writeInt((op << 24)
                | (((h.solicitedEvent ? BTH_SE : 0)
                                | (h.migReq ? BTH_MIGREQ : 0)
                                | (pad << 4)
                                | (h.transportVersion & 0x0F))
                        << 16)
                | (h.pkey & 0xFFFF));
        out.writeInt((h.fecn ? BTH_FECN << 24 : 0) | (h.becn ? BTH_BECN << 24 : 0) | (h.destQp & MASK_24));
        out.writeInt((h.ackRequest ? BTH_ACK_REQ << 24 : 0) | (h.psn & MASK_24));

        if (Opcode.hasDeth(op)) {
            out.writeInt(h.dethQkey);
            out.writeInt(h.dethSrcQp & MASK_24);
        }
        if (Opcode.hasReth(op)) {
            out.writeLong(h.rethVa);
            out.writeInt(h.rethRkey);
            out.writeInt(h.rethDmaLengthBytes);
        }
        if (Opcode.hasAtomicEth(op)) {
            out.writeLong(h.atomicVa);
            out.writeInt(h.atomicRkey);
            out.writeLong(h.atomicSwapOrAdd);
            out.writeLong(h.atomicCompare);
        }
        if (Opcode.hasAeth(op)) {
            out.writeInt((h.aethSyndrome << 24) | (h.aethMsn & MASK_24));
        }
        if (Opcode.hasAtomicAckEth(op)) {
            out.writeLong(h.atomicAckOriginalData);
        }
        if (Opcode.hasImmDt(op)) {
            out.writeInt(h.immDt);
        }
        if (Opcode.hasIeth(op)) {
            out.writeInt(h.iethRkey);
        }
        if (Opcode.isCnp(op)) {
            out.writeZero(Opcode.CNP_RESERVED_BYTES);
        }
        return ipOffset;
    }

    /**
     * The second half of {@link #encode}: after the caller appended exactly {@code payloadBytes}
     * bytes of payload, appends the pad and the ICRC.
     *
     * @throws IllegalStateException if the bytes appended since {@link #encodeHeaders} are not the
     *     payload length announced there
     */
    public void encodeTrailer(RoceHeaders h, int payloadBytes, int ipOffset, ByteBuf out) {
        encodeTrailer(h, payloadBytes, ipOffset, out, null, 0);
    }

    /**
     * {@link #encodeTrailer(RoceHeaders, int, int, ByteBuf)} for a frame whose payload was not
     * written but skipped (the writer index moved past it): it is read for the ICRC from {@code
     * payload} at {@code payloadIndex}, and the frame's sender fills it in.
     */
    public void encodeTrailer(
            RoceHeaders h, int payloadBytes, int ipOffset, ByteBuf out, ByteBuf payload, int payloadIndex) {
        int udpPayloadBytes = udpPayloadBytes(h.opcode, payloadBytes);
        int udpBytes = Ipv4UdpCodec.UDP_HEADER_BYTES + udpPayloadBytes;
        int written = out.writerIndex() - ipOffset;
        int expected = Ipv4UdpCodec.IPV4_HEADER_BYTES + udpBytes - h.padCount - Icrc.ICRC_BYTES;
        if (written != expected) {
            throw new IllegalStateException("payload of " + (written - (expected - payloadBytes)) + " bytes appended, "
                    + payloadBytes + " announced");
        }
        if (!icrcChecked) {
            out.ensureWritable(h.padCount + Icrc.ICRC_BYTES);
            out.writerIndex(out.writerIndex() + h.padCount + Icrc.ICRC_BYTES);
            return;
        }
        out.writeZero(h.padCount);
        int icrcValue = payload == null
                ? icrc.compute(out, ipOffset, Ipv4UdpCodec.IPV4_HEADER_BYTES, udpBytes)
                : icrc.compute(
                        out,
                        ipOffset,
                        Ipv4UdpCodec.IPV4_HEADER_BYTES,
                        udpBytes,
                        out.writerIndex() - h.padCount - payloadBytes,
                        payloadBytes,
                        payload,
                        payloadIndex);
        out.writeIntLE(icrcValue);
    }

    /**
     * Decodes the frame between {@code frame.readerIndex()} and {@code frame.writerIndex()} into
     * {@code into} (cleared first), verifying the IPv4 header checksum and the ICRC. Never throws
     * on malformed input. On a status other than {@link DecodeStatus#OK} the content of {@code
     * into} is unspecified.
     */
    public DecodeStatus decode(ByteBuf frame, RoceHeaders into) {
        into.clear();
        DecodeStatus ipStatus = Ipv4UdpCodec.decode(frame, into);
        if (ipStatus != DecodeStatus.OK) {
            return ipStatus;
        }
        if (into.udpDstPort != ROCE_V2_UDP_PORT) {
            return DecodeStatus.NOT_ROCE_PORT;
        }
        int bth = into.udpPayloadOffset;
        int udpPayloadBytes = into.udpPayloadBytes;
        if (udpPayloadBytes < BTH_BYTES + Icrc.ICRC_BYTES || (udpPayloadBytes & 3) != 0) {
            return DecodeStatus.BAD_LENGTH;
        }
        int op = frame.getUnsignedByte(bth);
        if (!Opcode.isValid(op)) {
            return DecodeStatus.UNKNOWN_OPCODE;
        }
        int flags = frame.getUnsignedByte(bth + 1);
        int tver = flags & 0x0F;
        if (tver != 0) {
            return DecodeStatus.BAD_TRANSPORT_VERSION;
        }
        int headerBytes = BTH_BYTES + Opcode.extensionHeaderBytes(op);
        int paddedPayloadBytes = udpPayloadBytes - headerBytes - Icrc.ICRC_BYTES;
        if (paddedPayloadBytes < 0) {
            return DecodeStatus.BAD_LENGTH;
        }
        if (!Opcode.hasPayload(op) && paddedPayloadBytes != 0) {
            return DecodeStatus.BAD_LENGTH;
        }
        int pad = (flags >>> 4) & 3;
        if (pad > paddedPayloadBytes) {
            return DecodeStatus.BAD_PAD;
        }
        int udpBytes = Ipv4UdpCodec.UDP_HEADER_BYTES + udpPayloadBytes;
        int icrcOffset = bth + udpPayloadBytes - Icrc.ICRC_BYTES;
        if (icrcVerified
                && icrc.compute(frame, into.ipOffset, into.ipHeaderBytes, udpBytes) != frame.getIntLE(icrcOffset)) {
            return DecodeStatus.BAD_ICRC;
        }

        into.opcode = op;
        into.solicitedEvent = (flags & BTH_SE) != 0;
        into.migReq = (flags & BTH_MIGREQ) != 0;
        into.padCount = pad;
        into.transportVersion = tver;
        into.pkey = frame.getUnsignedShort(bth + 2);
        int byte4 = frame.getUnsignedByte(bth + 4);
        into.fecn = (byte4 & BTH_FECN) != 0;
        into.becn = (byte4 & BTH_BECN) != 0;
        into.destQp = frame.getUnsignedMedium(bth + 5);
        into.ackRequest = (frame.getUnsignedByte(bth + 8) & BTH_ACK_REQ) != 0;
        into.psn = frame.getUnsignedMedium(bth + 9);

        int at = bth + BTH_BYTES;
        if (Opcode.hasDeth(op)) {
            into.dethQkey = frame.getInt(at);
            into.dethSrcQp = frame.getUnsignedMedium(at + 5);
            at += Opcode.DETH_BYTES;
        }
        if (Opcode.hasReth(op)) {
            into.rethVa = frame.getLong(at);
            into.rethRkey = frame.getInt(at + 8);
            into.rethDmaLengthBytes = frame.getInt(at + 12);
            at += Opcode.RETH_BYTES;
        }
        if (Opcode.hasAtomicEth(op)) {
            into.atomicVa = frame.getLong(at);
            into.atomicRkey = frame.getInt(at + 8);
            into.atomicSwapOrAdd = frame.getLong(at + 12);
            into.atomicCompare = frame.getLong(at + 20);
            at += Opcode.ATOMIC_ETH_BYTES;
        }
        if (Opcode.hasAeth(op)) {
            into.aethSyndrome = frame.getUnsignedByte(at);
            into.aethMsn = frame.getUnsignedMedium(at + 1);
            at += Opcode.AETH_BYTES;
        }
        if (Opcode.hasAtomicAckEth(op)) {
            into.atomicAckOriginalData = frame.getLong(at);
            at += Opcode.ATOMIC_ACK_ETH_BYTES;
        }
        if (Opcode.hasImmDt(op)) {
            into.immDt = frame.getInt(at);
            at += Opcode.IMM_DT_BYTES;
        }
        if (Opcode.hasIeth(op)) {
            into.iethRkey = frame.getInt(at);
        }
        into.payloadOffset = bth + headerBytes;
        into.payloadLengthBytes = paddedPayloadBytes - pad;
        return DecodeStatus.OK;
    }
}
