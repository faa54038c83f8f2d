package org.vrdma.runtime;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * Holds frames until their release time, then hands them to a sink: the place where delay,
 * jitter and reordering happen. Frames with equal release times leave in the order they came.
 * A min-heap over parallel arrays with one armed timer, so it allocates nothing per frame once
 * grown. Each frame may carry a 64-bit tag handed back with it. Owns the frames it holds;
 * {@link #close()} releases them.
 */
public final class DelayLine implements TimerHandler {
    /** Receives released frames with their tags. */
    public interface TaggedSink {
        void onFrame(ByteBuf frame, long tag, long nowNs);
    }

    private final TimerService timers;
    private final FrameSink sink;
    private final TaggedSink taggedSink;
    private ByteBuf[] frames = new ByteBuf[16];
    private long[] tags = new long[16];
    private long[] releaseNs = new long[16];
    private long[] sequence = new long[16];
    private int size;
    private long nextSequence;
    private long armedTimer = TimerService.NO_TIMER;
    private long armedDeadlineNs = Long.MAX_VALUE;

    public DelayLine(TimerService timers, FrameSink sink) {
        this.timers = timers;
        this.sink = sink;
        this.taggedSink = null;
    }

    public DelayLine(TimerService timers, TaggedSink sink) {
        this.timers = timers;
        this.sink = null;
        this.taggedSink = sink;
    }

    /** Delivers {@code frame} to the sink {@code delayNs} from now; takes ownership. */
    public void add(ByteBuf frame, long delayNs) {
        add(frame, 0, delayNs);
    }

    /** Delivers {@code frame} and its {@code tag} to the sink {@code delayNs} from now; takes ownership. */
    public void add(ByteBuf frame, long tag, long delayNs) {
        if (size == frames.length) {
            frames = Arrays.copyOf(frames, size * 2);
            tags = Arrays.copyOf(tags, size * 2);
            releaseNs = Arrays.copyOf(releaseNs, size * 2);
            sequence = Arrays.copyOf(sequence, size * 2);
        }
        long at = timers.nowNs() + delayNs;
        int i = size++;
        frames[i] = frame;
        tags[i] = tag;
        releaseNs[i] = at;
        sequence[i] = nextSequence++;
        siftUp(i);
        if (at < armedDeadlineNs) {
            timers.cancel(armedTimer);
            armedDeadlineNs = at;
            armedTimer = timers.scheduleAt(at, this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        armedTimer = TimerService.NO_TIMER;
        armedDeadlineNs = Long.MAX_VALUE;
        while (size > 0 && releaseNs[0] <= nowNs) {
            ByteBuf frame = frames[0];
            long tag = tags[0];
            removeHead();
            if (taggedSink != null) {
                taggedSink.onFrame(frame, tag, nowNs);
            } else {
                sink.onFrame(frame, nowNs);
            }
        }
        if (size > 0 && releaseNs[0] < armedDeadlineNs) {
            armedDeadlineNs = releaseNs[0];
            armedTimer = timers.scheduleAt(armedDeadlineNs, this);
        }
    }

    public int size() {
        return size;
    }

    /** Releases every held frame and cancels the timer. */
    public void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        armedDeadlineNs = Long.MAX_VALUE;
        for (int i = 0; i < size; i++) {
            frames[i].release();
            frames[i] = null;
        }
        size = 0;
    }

    private boolean before(int a, int b) {
        return releaseNs[a] < releaseNs[b] || (releaseNs[a] == releaseNs[b] && sequence[a] < sequence[b]);
    }

    private void swap(int a, int b) {
        ByteBuf f = frames[a];
        frames[a] = frames[b];
        frames[b] = f;
        long t = tags[a];
        tags[a] = tags[b];
        tags[b] = t;
        long r = releaseNs[a];
        releaseNs[a] = releaseNs[b];
        releaseNs[b] = r;
        long s = sequence[a];
        sequence[a] = sequence[b];
        sequence[b] = s;
    }

    private void siftUp(int i) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!before(i, parent)) {
                return;
            }
            swap(i, parent);
            i = parent;
        }
    }

    private void removeHead() {
        size--;
        frames[0] = null;
        if (size == 0) {
            return;
        }
        swap(0, size);
        frames[size] = null;
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                return;
            }
            if (child + 1 < size && before(child + 1, child)) {
                child++;
            }
            if (!before(child, i)) {
                return;
            }
            swap(i, child);
            i = child;
        }
    }
}
