package org.vrdma.runtime;

import io.netty.buffer.ByteBuf;

/** Something that frames are delivered to. The sink owns the frame and must release it. */
@FunctionalInterface
public interface FrameSink {
    void onFrame(ByteBuf frame, long nowNs);
}
