package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.cc.IntTelemetry;

/** An ENI sink for tests: keeps copies of what it is given, releases the frames. */
public final class Collector implements IntTelemetrySink {
    public final List<byte[]> frames = new ArrayList<>();
    public final List<Long> timesNs = new ArrayList<>();
    public final List<IntTelemetry> telemetry = new ArrayList<>();
    public long bytes;
    private final boolean keep;

    public Collector() {
        this(true);
    }

    /** @param keep false to count only */
    public Collector(boolean keep) {
        this.keep = keep;
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        bytes += frame.readableBytes();
        if (keep) {
            frames.add(Frames.bytes(frame));
            timesNs.add(nowNs);
        } else {
            frames.add(null);
        }
        frame.release();
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs, IntTelemetry t) {
        telemetry.add(new IntTelemetry().copyFrom(t));
        onFrame(frame, nowNs);
    }

    public int count() {
        return frames.size();
    }
}
