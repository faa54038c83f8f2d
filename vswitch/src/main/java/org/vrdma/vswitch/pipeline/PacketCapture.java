package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;

/**
 * Receives a view of packets at the {@link CapturePoint}s while a capture runs. Must not retain,
 * release or modify the frame, nor move its indexes; called on the switch's thread.
 */
@FunctionalInterface
public interface PacketCapture {
    void onPacket(CapturePoint point, ByteBuf frame, long nowNs);
}
