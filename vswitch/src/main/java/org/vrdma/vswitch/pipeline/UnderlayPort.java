package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;

/**
 * Where the vSwitch sends underlay datagrams: a UDP socket in real time, a modelled link or fabric
 * in virtual time.
 *
 * <p>Ownership: {@link #send} takes the datagram and must release it (or pass it on). The datagram's
 * readable bytes are the UDP payload (Geneve header, options, inner frame). The switch guarantees
 * that the {@link #OUTER_HEADERS_BYTES} bytes just before the reader index hold the outer Ethernet,
 * IPv4 and UDP headers of this datagram, so a virtual-time underlay can forward the whole underlay
 * frame without copying by moving the reader index back.
 */
public interface UnderlayPort {
    /** Outer Ethernet (14) + IPv4 (20) + UDP (8). */
    int OUTER_HEADERS_BYTES = 42;

    void send(ByteBuf datagram, long destinationUnderlayAddress);

    /**
     * Fills in whatever of {@code frame} (an inner frame the switch is about to hand to anything
     * but {@link #send}, e.g. a local ENI) this underlay agreed to gather only when sending it (a
     * payload left in the memory region, see {@code DeferredPayloadAllocator}). Nothing by default.
     */
    default void completeFrame(ByteBuf frame) {}
}
