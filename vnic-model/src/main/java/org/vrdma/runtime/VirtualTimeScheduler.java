package org.vrdma.runtime;

import java.util.function.BooleanSupplier;
import java.util.random.RandomGenerator;

/**
 * Deterministic discrete-event driver: time jumps from one timer deadline to the next, so a
 * 100 Gbit/s experiment of many hosts runs as fast as the events can be processed, and the same
 * seed and inputs always give the same sequence of events.
 *
 * <p>Simultaneous events run in the order they were scheduled. An event scheduled in the past runs
 * at the current time, after the events already due. Single-threaded by design.
 */
public final class VirtualTimeScheduler implements TimerService {
    private final EventHeap timers = new EventHeap(1024);
    private final SeededRandoms randoms;
    private long nowNs;
    private long eventsFired;
    private EventTracer tracer;

    /** A scheduler starting at time 0 whose random streams derive from {@code seed}. */
    public VirtualTimeScheduler(long seed) {
        this(seed, 0L);
    }

    public VirtualTimeScheduler(long seed, long startNs) {
        this.randoms = new SeededRandoms(seed);
        this.nowNs = startNs;
    }

    @Override
    public long nowNs() {
        return nowNs;
    }

    @Override
    public long scheduleAt(long deadlineNs, TimerHandler handler) {
        return timers.add(Math.max(deadlineNs, nowNs), handler);
    }

    @Override
    public boolean cancel(long timerId) {
        return timers.cancel(timerId);
    }

    /** Reproducible random streams of this run (see {@link SeededRandoms}). */
    public SeededRandoms randoms() {
        return randoms;
    }

    /** Shortcut for {@code randoms().stream(name)}. */
    public RandomGenerator random(String name) {
        return randoms.stream(name);
    }

    /** Shortcut for {@code randoms().stream(name, index)}. */
    public RandomGenerator random(String name, long index) {
        return randoms.stream(name, index);
    }

    /** Records every event; null switches tracing off. */
    public void tracer(EventTracer tracer) {
        this.tracer = tracer;
    }

    /** Runs the next event, advancing time to its deadline; false when nothing is pending. */
    public boolean runNext() {
        long next = timers.peekDeadlineNs();
        if (next == Long.MAX_VALUE && timers.isEmpty()) {
            return false;
        }
        nowNs = next;
        if (tracer != null) {
            tracer.onEvent(nowNs, timers.peekId(), timers.peekHandler());
        }
        timers.fireEarliest(nowNs);
        eventsFired++;
        return true;
    }

    /**
     * Runs every event due at or before {@code endNs}, then sets the time to {@code endNs}.
     *
     * @return the number of events run
     */
    public long runUntil(long endNs) {
        long before = eventsFired;
        while (timers.peekDeadlineNs() <= endNs && !timers.isEmpty()) {
            runNext();
        }
        if (endNs > nowNs) {
            nowNs = endNs;
        }
        return eventsFired - before;
    }

    /** Runs for {@code durationNs} of virtual time from now. */
    public long runFor(long durationNs) {
        return runUntil(nowNs + durationNs);
    }

    /**
     * Runs until nothing is pending or {@code maxEvents} have run, whichever comes first; the bound
     * keeps a self-rescheduling engine from looping for ever.
     *
     * @return the number of events run
     */
    public long runUntilIdle(long maxEvents) {
        long count = 0;
        while (count < maxEvents && runNext()) {
            count++;
        }
        return count;
    }

    /** Runs events until {@code condition} holds, time passes {@code endNs} or nothing is pending. */
    public boolean runUntil(BooleanSupplier condition, long endNs) {
        while (!condition.getAsBoolean()) {
            if (timers.isEmpty() || timers.peekDeadlineNs() > endNs) {
                return condition.getAsBoolean();
            }
            runNext();
        }
        return true;
    }

    public int pendingTimers() {
        return timers.size();
    }

    public long eventsFired() {
        return eventsFired;
    }
}
