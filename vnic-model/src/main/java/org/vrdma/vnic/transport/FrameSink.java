package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;

/** Where a device's outgoing frames go: the vSwitch port in production, a modelled link in tests. */
@FunctionalInterface
public interface FrameSink {
    /**
     * Takes one frame. Ownership passes to the sink: it must release the frame when done with it
     * (including when it drops it).
     */
    void onFrame(ByteBuf frame);
}
