package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;

/** Receives an underlay frame with its {@link FrameTag}; takes ownership of the frame. */
@FunctionalInterface
interface TaggedSink {
    void onFrame(ByteBuf frame, long tag, long nowNs);
}
