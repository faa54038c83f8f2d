package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * The propagation delay of one link direction: frames leave an egress port in order and arrive at
 * the far end {@code delayNs} later, in the same order, each with its {@link FrameTag} ({@link
 * FrameTag#UNTAGGED} when it comes from a host, whose vSwitch knows no tags). A ring of frames,
 * tags and arrival times with at most one armed timer, so it allocates nothing per frame once
 * grown. Owns the frames it holds.
 */
final class Wire implements FrameSink, TaggedSink, TimerHandler {
    private final TimerService timers;
    private final long delayNs;
    private TaggedSink far;
    private ByteBuf[] frames = new ByteBuf[16];
    private long[] tags = new long[16];
    private long[] arrivalNs = new long[16];
    private int head;
    private int count;
    private long armedTimer = TimerService.NO_TIMER;

    Wire(TimerService timers, long delayNs) {
        this.timers = timers;
        this.delayNs = delayNs;
    }

    /** Where frames arrive; set once the far end exists. */
    void connect(TaggedSink farEnd) {
        this.far = farEnd;
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        onFrame(frame, FrameTag.UNTAGGED, nowNs);
    }

    @Override
    public void onFrame(ByteBuf frame, long tag, long nowNs) {
        if (delayNs == 0) {
            far.onFrame(frame, tag, nowNs);
            return;
        }
        if (count == frames.length) {
            grow();
        }
        int tail = (head + count) & (frames.length - 1);
        frames[tail] = frame;
        tags[tail] = tag;
        arrivalNs[tail] = nowNs + delayNs;
        count++;
        if (armedTimer == TimerService.NO_TIMER) {
            armedTimer = timers.scheduleAt(arrivalNs[head], this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        armedTimer = TimerService.NO_TIMER;
        while (count > 0 && arrivalNs[head] <= nowNs) {
            ByteBuf f = frames[head];
            long tag = tags[head];
            frames[head] = null;
            head = (head + 1) & (frames.length - 1);
            count--;
            far.onFrame(f, tag, nowNs);
        }
        if (count > 0) {
            armedTimer = timers.scheduleAt(arrivalNs[head], this);
        }
    }

    int inFlight() {
        return count;
    }

    void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        while (count > 0) {
            frames[head].release();
            frames[head] = null;
            head = (head + 1) & (frames.length - 1);
            count--;
        }
    }

    private void grow() {
        int n = frames.length;
        ByteBuf[] f = new ByteBuf[n * 2];
        long[] t = new long[n * 2];
        long[] a = new long[n * 2];
        for (int i = 0; i < count; i++) {
            f[i] = frames[(head + i) & (n - 1)];
            t[i] = tags[(head + i) & (n - 1)];
            a[i] = arrivalNs[(head + i) & (n - 1)];
        }
        frames = f;
        tags = t;
        arrivalNs = a;
        head = 0;
    }
}
