package org.vrdma.vswitch.runtime;

import io.netty.util.concurrent.EventExecutor;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * An event loop's clock: {@code System.nanoTime()}, except inside a burst of work (a socket's read
 * burst, the timers due on a turn), where one reading serves {@link #READS_PER_SAMPLE} calls. In this paravirtualised guest a {@code System.nanoTime()}
 * (kvm-clock through the vDSO) costs 100-170 ns, and the data path read it two to three times per
 * packet on each side (the vNIC's send and receive, the switch's ENI and underlay entry, the
 * egress port): {@code perf} put 8% of the sending loop and 6% of the receiving loop there. A
 * sample is at most {@code READS_PER_SAMPLE - 1} reads old, a few packets' work (a few µs), far
 * below the transport's timer resolution (RTO floor in ms), and time never goes backwards: a
 * sample is only replaced by a later one, and outside bursts every read is fresh.
 *
 * <p>One instance per event loop ({@link #of}), shared by every timer service and socket reader on
 * that loop. Bursts are begun and ended on the loop's thread; reads from other threads always read
 * the clock.
 */
public final class LoopClock {
    /** Calls served by one {@code System.nanoTime()} inside a burst. */
    static final int READS_PER_SAMPLE = 16;

    private static final Map<EventExecutor, LoopClock> CLOCKS = new WeakHashMap<>();

    private final EventExecutor loop;
    private int burstDepth;
    private int readsLeft;
    private long sampleNs;
    private long samples;
    private long reads;

    private LoopClock(EventExecutor loop) {
        this.loop = loop;
    }

    /** The clock of {@code loop} (created on first use). */
    public static LoopClock of(EventExecutor loop) {
        synchronized (CLOCKS) {
            return CLOCKS.computeIfAbsent(loop, LoopClock::new);
        }
    }

    public long nowNs() {
        if (burstDepth == 0 || !loop.inEventLoop()) {
            return System.nanoTime();
        }
        reads++;
        if (--readsLeft >= 0) {
            return sampleNs;
        }
        readsLeft = READS_PER_SAMPLE - 1;
        samples++;
        return sampleNs = System.nanoTime();
    }

    /** Starts a burst of work on the loop's thread: the next read samples the clock. Nests. */
    public void beginBurst() {
        burstDepth++;
        readsLeft = 0;
    }

    public void endBurst() {
        burstDepth--;
    }

    /** Reads inside bursts, and how many of them sampled the clock (the rest were served a sample). */
    public long burstReads() {
        return reads;
    }

    public long burstSamples() {
        return samples;
    }
}
