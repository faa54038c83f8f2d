package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.vrdma.wire.DecodeStatus;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceCodec;
import org.vrdma.wire.RoceHeaders;

/**
 * The production {@link PacketCodec}: real RoCEv2 frames through {@link RoceCodec}. Holds reusable
 * header holders, so it allocates nothing but the frames themselves; one instance per device (it is
 * confined to the device's thread).
 */
public final class RocePacketCodec implements PacketCodec {
    /** Smaller payloads are copied into the frame: an iovec of their own costs more than the copy. */
    static final int MIN_DEFERRED_PAYLOAD_BYTES = 256;

    private final RoceCodec codec;
    private final RoceHeaders tx = new RoceHeaders();
    private final RoceHeaders rx = new RoceHeaders();
    private final RoceHeaders sizing = new RoceHeaders();
    private long lastDecodeFailures;

    public RocePacketCodec() {
        this.codec = new RoceCodec();
    }

    private RocePacketCodec(final RoceCodec codec) {
        this.codec = codec;
    }

    /**
     * A codec for simulations that model only payload lengths (memory regions backed by {@code
     * LengthOnlyMemory}): frames carry no ICRC and none is checked, so neither side reads a
     * payload byte.
     */
    public static RocePacketCodec withoutIcrc() {
        return new RocePacketCodec(new RoceCodec(false));
    }

    /**
     * A codec that writes the ICRC of every frame it sends but does not check the ICRC of frames it
     * receives: for an underlay whose own checksum already covers the whole frame (see {@link
     * RoceCodec#RoceCodec(boolean, boolean)}). Saves one pass over every received payload.
     */
    public static RocePacketCodec withoutReceiveIcrcCheck() {
        return new RocePacketCodec(new RoceCodec(true, false));
    }

    /** Whether received frames have their ICRC checked. */
    public boolean checksReceivedIcrc() {
        return codec.icrcVerified();
    }

    @Override
    public ByteBuf encode(final TransportPacket p, final ByteBufAllocator allocator) {
        return encode(p, allocator, 0);
    }

    @Override
    public ByteBuf encode(final TransportPacket p, final ByteBufAllocator allocator, final int headroomBytes) {
        final RoceHeaders h = tx;
        h.clear();
        h.srcMac = p.srcMac;
        h.dstMac = p.dstMac;
        h.srcIp = p.srcIpv4;
        h.dstIp = p.dstIpv4;
        h.dscp = p.dscp;
        h.ecn = p.ecn;
        h.udpSrcPort = p.udpSrcPort;
        h.opcode = p.opcode;
        h.solicitedEvent = p.solicited;
        h.pkey = p.pkey;
        h.destQp = p.destQp;
        h.ackRequest = p.ackReq;
        h.psn = p.psn;
        h.rethVa = p.rethVa;
        h.rethRkey = p.rethRkey;
        h.rethDmaLengthBytes = p.rethLength;
        h.aethSyndrome = p.aethSyndrome;
        h.aethMsn = p.aethMsn;
        h.atomicVa = p.atomicVa;
        h.atomicRkey = p.atomicRkey;
        h.atomicSwapOrAdd = p.atomicSwapOrAdd;
        h.atomicCompare = p.atomicCompare;
        h.atomicAckOriginalData = p.atomicOriginal;
        h.immDt = p.immData;
        h.iethRkey = p.iethRkey;
        h.dethQkey = p.dethQkey;
        h.dethSrcQp = p.dethSrcQp;
        if (p.payloadSource != null && Opcode.hasPayload(p.opcode)) {
            return encodeGathered(p, h, allocator, headroomBytes);
        }
        final boolean hasPayload = Opcode.hasPayload(p.opcode) && p.payload != null;
        ByteBuf payload = null;
        if (hasPayload) {
            final boolean whole =
                    p.payload.readerIndex() == p.payloadIndex && p.payload.readableBytes() == p.payloadLength;
            // The engines always hand over a whole staging buffer; a slice is only for other callers.
            payload = whole ? p.payload : p.payload.slice(p.payloadIndex, p.payloadLength);
        }
        final ByteBuf out =
                allocator.directBuffer(headroomBytes + RoceCodec.frameLength(h, hasPayload ? p.payloadLength : 0));
        out.setIndex(headroomBytes, headroomBytes);
        try {
            codec.encode(h, payload, out);
        } catch (final RuntimeException e) {
            out.release();
            throw e;
        }
        return out;
    }

    /** The payload is read from its source straight into the frame: no staging copy. */
    private ByteBuf encodeGathered(
            final TransportPacket p, final RoceHeaders h, final ByteBufAllocator allocator, final int headroomBytes) {
        final int payloadBytes = p.payloadLength;
        final ByteBuf out = allocator.directBuffer(headroomBytes + RoceCodec.frameLength(h, payloadBytes));
        out.setIndex(headroomBytes, headroomBytes);
        try {
            final int ipOffset = codec.encodeHeaders(h, payloadBytes, out);
            final ByteBuf memory =
                    payloadBytes >= MIN_DEFERRED_PAYLOAD_BYTES && allocator instanceof DeferredPayloadAllocator
                            ? p.payloadSource.contiguousBuffer(p.payloadSourceOffset, payloadBytes)
                            : null;
            if (memory != null) {
                final int memoryIndex = p.payloadSource.contiguousIndex(p.payloadSourceOffset);
                final int hole = out.writerIndex();
                if (((DeferredPayloadAllocator) allocator)
                        .deferPayload(out, hole, payloadBytes, memory.memoryAddress() + memoryIndex)) {
                    // The sender gathers the payload from the memory region: skipped here.
                    out.writerIndex(hole + payloadBytes);
                    codec.encodeTrailer(h, payloadBytes, ipOffset, out, memory, memoryIndex);
                    return out;
                }
            }
            p.payloadSource.gather(p.payloadSourceOffset, out, payloadBytes);
            codec.encodeTrailer(h, payloadBytes, ipOffset, out);
        } catch (final RuntimeException e) {
            out.release();
            throw e;
        }
        return out;
    }

    @Override
    public boolean decode(final ByteBuf frame, final TransportPacket p) {
        final RoceHeaders h = rx;
        if (codec.decode(frame, h) != DecodeStatus.OK) {
            lastDecodeFailures++;
            return false;
        }
        p.srcMac = h.srcMac;
        p.dstMac = h.dstMac;
        p.srcIpv4 = h.srcIp;
        p.dstIpv4 = h.dstIp;
        p.dscp = h.dscp;
        p.ecn = h.ecn;
        p.udpSrcPort = h.udpSrcPort;
        p.opcode = h.opcode;
        p.solicited = h.solicitedEvent;
        p.pkey = h.pkey;
        p.destQp = h.destQp;
        p.ackReq = h.ackRequest;
        p.psn = h.psn;
        p.rethVa = h.rethVa;
        p.rethRkey = h.rethRkey;
        p.rethLength = h.rethDmaLengthBytes;
        p.aethSyndrome = h.aethSyndrome;
        p.aethMsn = h.aethMsn;
        p.atomicVa = h.atomicVa;
        p.atomicRkey = h.atomicRkey;
        p.atomicSwapOrAdd = h.atomicSwapOrAdd;
        p.atomicCompare = h.atomicCompare;
        p.atomicOriginal = h.atomicAckOriginalData;
        p.immData = h.immDt;
        p.iethRkey = h.iethRkey;
        p.dethQkey = h.dethQkey;
        p.dethSrcQp = h.dethSrcQp;
        p.payload = frame;
        p.payloadIndex = h.payloadOffset;
        p.payloadLength = h.payloadLengthBytes;
        return true;
    }

    @Override
    public int frameLength(final int opcode, final int payloadBytes) {
        sizing.opcode = opcode;
        return RoceCodec.frameLength(sizing, payloadBytes);
    }

    /** Frames that failed to decode so far. */
    public long decodeFailures() {
        return lastDecodeFailures;
    }
}
