package org.vrdma.vswitch.fabric;

import io.netty.buffer.ByteBuf;
import org.vrdma.runtime.Clock;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vswitch.pipeline.UnderlayPort;

/**
 * Connects a vSwitch to a virtual-time fabric: each datagram becomes the whole underlay frame again
 * (the switch leaves its outer headers just before the reader index, see {@link UnderlayPort}), at
 * no copy, and goes to a link or a {@link FabricSwitch} port. The receiving side feeds frames to
 * {@code VSwitch.onUnderlayFrame}.
 */
public final class FabricUplink implements UnderlayPort {
    private final Clock clock;
    private final FrameSink link;

    /** @param link a {@code LinkModel::send} adapter, a fabric switch's ingress, or any sink */
    public FabricUplink(Clock clock, FrameSink link) {
        this.clock = clock;
        this.link = link;
    }

    @Override
    public void send(ByteBuf datagram, long destinationUnderlayAddress) {
        datagram.readerIndex(datagram.readerIndex() - OUTER_HEADERS_BYTES);
        link.onFrame(datagram, clock.nowNs());
    }
}
