package org.vrdma.runtime;

import io.netty.buffer.ByteBuf;
import java.math.BigInteger;
import java.util.random.RandomGenerator;

/**
 * A one-way link in virtual time: a FIFO transmit queue drained at {@code rateBps}, then
 * {@code propagationDelayNs} of wire, then seeded faults from a {@link FaultInjector} (random and
 * burst loss, duplication, delay, jitter, reordering). Frames that would overflow the queue
 * are tail-dropped. Serialisation is tracked in picoseconds so that rates that do not divide a
 * nanosecond evenly accumulate no drift.
 *
 * <p>Ownership: {@link #send} takes the frame; the link either hands it to the sink (which then
 * owns it) or releases it when it is dropped. One timer is pending at most, for the frame that
 * arrives next, so a link costs O(1) scheduler entries however many frames are in flight.
 */
public final class LinkModel implements TimerHandler {
    private static final long PS_PER_SECOND = 1_000_000_000_000L;

    private final TimerService timers;
    private final FrameSink sink;
    private final long rateBps;
    private final long propagationDelayNs;
    private final long queueCapacityBytes;
    private final FaultInjector faults;
    private final DelayLine delayLine;

    // In-flight frames in arrival order (a ring buffer; arrival times are monotonic).
    private ByteBuf[] frames = new ByteBuf[64];
    private long[] txDoneNs = new long[64];
    private long[] arrivalNs = new long[64];
    private int head;
    private int queueHead; // first frame still waiting or being serialised
    private int tail;
    private int count;
    private int queuedFrames; // frames from queueHead on that have not left the transmitter
    private long queuedBytes;
    private long busyUntilPs;
    private long armedTimer = TimerService.NO_TIMER;

    private long framesSent;
    private long bytesSent;
    private long framesDelivered;
    private long bytesDelivered;
    private long framesLost;
    private long framesTailDropped;
    private long queueHighWaterBytes;

    public LinkModel(TimerService timers, LinkConfig config, RandomGenerator random, FrameSink sink) {
        this.timers = timers;
        this.sink = sink;
        this.rateBps = config.rateBps();
        this.propagationDelayNs = config.propagationDelayNs();
        this.queueCapacityBytes = config.queueCapacityBytes();
        this.faults = new FaultInjector(FaultConfig.randomLoss(config.lossProbability()), random);
        this.delayLine = new DelayLine(timers, sink);
    }

    /**
     * Queues a frame for transmission; the link owns it from here on.
     *
     * @return false when the frame was tail-dropped (and released)
     */
    public boolean send(ByteBuf frame) {
        long nowNs = timers.nowNs();
        drainSerialised(nowNs);
        int bytes = frame.readableBytes();
        if (queuedBytes + bytes > queueCapacityBytes) {
            framesTailDropped++;
            frame.release();
            return false;
        }
        long nowPs = nowNs * 1000;
        long startPs = Math.max(nowPs, busyUntilPs);
        busyUntilPs = startPs + serialisationPs(bytes);
        long doneNs = ceilDiv(busyUntilPs, 1000);
        if (count == frames.length) {
            grow();
        }
        frames[tail] = frame;
        txDoneNs[tail] = doneNs;
        arrivalNs[tail] = doneNs + propagationDelayNs;
        tail = (tail + 1) & (frames.length - 1);
        count++;
        queuedFrames++;
        queuedBytes += bytes;
        queueHighWaterBytes = Math.max(queueHighWaterBytes, queuedBytes);
        framesSent++;
        bytesSent += bytes;
        if (armedTimer == TimerService.NO_TIMER) {
            armedTimer = timers.scheduleAt(arrivalNs[head], this);
        }
        return true;
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        armedTimer = TimerService.NO_TIMER;
        drainSerialised(nowNs);
        while (count > 0 && arrivalNs[head] <= nowNs) {
            ByteBuf frame = frames[head];
            frames[head] = null;
            head = (head + 1) & (frames.length - 1);
            count--;
            arrive(frame, nowNs);
        }
        if (count > 0 && armedTimer == TimerService.NO_TIMER) {
            armedTimer = timers.scheduleAt(arrivalNs[head], this);
        }
    }

    private void arrive(ByteBuf frame, long nowNs) {
        int verdict = faults.judge();
        if (verdict == FaultInjector.DROP) {
            framesLost++;
            frame.release();
            return;
        }
        if (verdict == FaultInjector.DUPLICATE) {
            // A real copy: a receiver may rewrite headers in place (ECN marking, decapsulation).
            deliver(frame.copy(), faults.duplicateDelayNs(), nowNs);
        }
        deliver(frame, faults.delayNs(), nowNs);
    }

    private void deliver(ByteBuf frame, long extraDelayNs, long nowNs) {
        framesDelivered++;
        bytesDelivered += frame.readableBytes();
        if (extraDelayNs == 0 && delayLine.size() == 0) {
            sink.onFrame(frame, nowNs);
        } else {
            // Once anything is held, everything goes through the delay line to keep its order.
            delayLine.add(frame, extraDelayNs);
        }
    }

    /** Drops everything in flight (releasing the frames) and cancels the pending timer. */
    public void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        while (count > 0) {
            frames[head].release();
            frames[head] = null;
            head = (head + 1) & (frames.length - 1);
            count--;
        }
        queueHead = head;
        tail = head;
        queuedFrames = 0;
        queuedBytes = 0;
        delayLine.close();
    }

    /** Changes the random loss probability at run time, keeping the other faults. */
    public void lossProbability(double p) {
        faults.config(faults.config().withLoss(p));
    }

    /** Replaces the faults applied to frames arriving from now on (loss, bursts, reordering, ...). */
    public void faults(FaultConfig config) {
        faults.config(config);
    }

    /** The fault injector of this link, for its counters. */
    public FaultInjector faultInjector() {
        return faults;
    }

    /** Bytes waiting for or under serialisation now. */
    public long queuedBytes() {
        drainSerialised(timers.nowNs());
        return queuedBytes;
    }

    public long framesSent() {
        return framesSent;
    }

    public long bytesSent() {
        return bytesSent;
    }

    public long framesDelivered() {
        return framesDelivered;
    }

    public long bytesDelivered() {
        return bytesDelivered;
    }

    public long framesLost() {
        return framesLost;
    }

    public long framesTailDropped() {
        return framesTailDropped;
    }

    public long queueHighWaterBytes() {
        return queueHighWaterBytes;
    }

    public int framesInFlight() {
        return count;
    }

    /** Serialisation time of {@code bytes} at this link's rate, in picoseconds (rounded up). */
    public long serialisationPs(long bytes) {
        return serialisationPs(bytes, rateBps);
    }

    /**
     * Serialisation time of {@code bytes} at {@code rateBps} (positive), in picoseconds rounded up:
     * the one rounding rule of every modelled link and egress queue.
     */
    public static long serialisationPs(long bytes, long rateBps) {
        long bits = bytes * 8;
        if (bits <= Long.MAX_VALUE / PS_PER_SECOND) {
            return ceilDiv(bits * PS_PER_SECOND, rateBps);
        }
        // Beyond ~1.1 MB the product overflows; frames never get there, totals in tests may.
        return BigInteger.valueOf(bits)
                .multiply(BigInteger.valueOf(PS_PER_SECOND))
                .add(BigInteger.valueOf(rateBps - 1))
                .divide(BigInteger.valueOf(rateBps))
                .longValueExact();
    }

    private void drainSerialised(long nowNs) {
        // A frame arrives only after it has left the transmitter, so this runs before deliveries.
        int mask = frames.length - 1;
        while (queuedFrames > 0 && txDoneNs[queueHead] <= nowNs) {
            queuedBytes -= frames[queueHead].readableBytes();
            queueHead = (queueHead + 1) & mask;
            queuedFrames--;
        }
    }

    private void grow() {
        int oldLength = frames.length;
        ByteBuf[] newFrames = new ByteBuf[oldLength * 2];
        long[] newTxDone = new long[oldLength * 2];
        long[] newArrival = new long[oldLength * 2];
        for (int i = 0; i < count; i++) {
            int from = (head + i) & (oldLength - 1);
            newFrames[i] = frames[from];
            newTxDone[i] = txDoneNs[from];
            newArrival[i] = arrivalNs[from];
        }
        frames = newFrames;
        txDoneNs = newTxDone;
        arrivalNs = newArrival;
        head = 0;
        tail = count;
        queueHead = count - queuedFrames;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
