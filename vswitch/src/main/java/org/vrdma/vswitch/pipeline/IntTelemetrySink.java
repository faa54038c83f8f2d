package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.runtime.FrameSink;

/**
 * An ENI sink that also wants the INT records a frame collected on its way (HPCC). The switch calls
 * {@link #onFrame(ByteBuf, long, IntTelemetry)} for frames that carried an INT option; the
 * telemetry holder is only valid during the call. A frame the ENI's ingress meter had to queue is
 * delivered later through {@link #onFrame(ByteBuf, long)}, without its records.
 */
public interface IntTelemetrySink extends FrameSink {
    void onFrame(ByteBuf frame, long nowNs, IntTelemetry telemetry);
}
