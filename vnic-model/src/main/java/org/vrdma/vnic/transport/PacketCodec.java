package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The seam between the transport and the wire format: turns a {@link TransportPacket} into a
 * complete frame (inner Ethernet/IPv4/UDP/BTH/…/payload/ICRC) and back. Implementations are
 * stateless or confined to the engine's thread.
 */
public interface PacketCodec {
    /**
     * Encodes {@code packet} (headers plus its payload bytes, which are not consumed or released)
     * into a new buffer from {@code allocator}.
     *
     * @return the frame; the caller owns it
     */
    ByteBuf encode(TransportPacket packet, ByteBufAllocator allocator);

    /**
     * Like {@link #encode(TransportPacket, ByteBufAllocator)}, with {@code headroomBytes} free before
     * the frame's reader index, where a switch can prepend its encapsulation without a copy.
     * Codecs that cannot leave headroom encode without it.
     */
    default ByteBuf encode(TransportPacket packet, ByteBufAllocator allocator, int headroomBytes) {
        return encode(packet, allocator);
    }

    /**
     * Decodes {@code frame} into {@code into}, whose {@code payload} then refers to the frame itself
     * (not retained, no slice allocated). The frame is neither consumed nor released.
     *
     * @return true if the frame is a well-formed RoCEv2 packet; false to drop it
     */
    boolean decode(ByteBuf frame, TransportPacket into);

    /** Bytes a frame carrying {@code payloadBytes} occupies on the link for {@code opcode}. */
    int frameLength(int opcode, int payloadBytes);
}
