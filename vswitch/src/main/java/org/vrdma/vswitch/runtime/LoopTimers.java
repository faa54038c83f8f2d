package org.vrdma.vswitch.runtime;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.vrdma.runtime.EventHeap;
import org.vrdma.runtime.TimerHandler;

/**
 * The pending timers of one event loop and how they get run. Timers wait in an {@link EventHeap};
 * a timer due now is run by one reused task queued on the loop (after the event that is running
 * now, in order with the loop's other tasks). For later deadlines there are two ways to be woken:
 *
 * <ul>
 *   <li>on a {@link TimerEventLoop} the loop itself asks {@link #nextDeadlineNs()} before it
 *       blocks and {@link #queueExpiryIfDue} each turn, so arming, moving and cancelling a timer
 *       touch only the heap: no Netty task, no allocation, and a cancelled timer wakes nobody;
 *   <li>on any other loop ({@code scheduler} set) one Netty scheduled task is armed for the
 *       earliest deadline and moved only when a new timer becomes the earliest; it allocates a
 *       task each time it is armed.
 * </ul>
 *
 * <p>Confined to its loop's thread.
 */
final class LoopTimers {
    private final EventHeap heap = new EventHeap(256);
    private final Executor loop;
    private final LongSupplier clock;
    /** Null on a {@link TimerEventLoop}, which wakes for the deadlines itself. */
    private final EventExecutor scheduler;

    private final Runnable expireTask = this::onExpireTask;
    private boolean expiryQueued;

    private final Runnable scheduledExpiry = this::onScheduledExpiry;
    private long armedDeadlineNs = Long.MAX_VALUE;
    private ScheduledFuture<?> armed;

    private long timersFired;
    private LoopClock loopClock;

    /**
     * @param loop where the expiry task is queued
     * @param clock the time timers are due by ({@code System::nanoTime} outside tests)
     * @param scheduler the loop to arm a Netty scheduled task on for later deadlines, or null when
     *     the loop asks {@link #nextDeadlineNs()} itself
     */
    LoopTimers(Executor loop, LongSupplier clock, EventExecutor scheduler) {
        this.loop = loop;
        this.clock = clock;
        this.scheduler = scheduler;
    }

    long nowNs() {
        return clock.getAsLong();
    }

    /** The loop's {@link LoopClock}, looked up once, or null when the loop is not an event executor (tests). */
    private LoopClock loopClock() {
        if (loopClock == null && loop instanceof EventExecutor executor) {
            loopClock = LoopClock.of(executor);
        }
        return loopClock;
    }

    long add(long deadlineNs, TimerHandler handler) {
        long id = heap.add(deadlineNs, handler);
        if (expiryQueued && scheduler == null) {
            // The queued expiry runs every timer due by then, this one included if it is.
            return id;
        }
        long delayNs = deadlineNs - clock.getAsLong();
        if (delayNs <= 0) {
            queueExpiry();
        } else if (scheduler != null && deadlineNs < armedDeadlineNs) {
            arm(deadlineNs, delayNs);
        }
        return id;
    }

    boolean cancel(long timerId) {
        // On a TimerEventLoop the next wait already ends at the new earliest deadline; elsewhere the
        // armed task may fire early with nothing due and re-arms for the new earliest.
        return heap.cancel(timerId);
    }

    int pending() {
        return heap.size();
    }

    long fired() {
        return timersFired;
    }

    /** The earliest pending deadline ({@link Long#MAX_VALUE} when none): where the loop's wait must end. */
    long nextDeadlineNs() {
        return heap.peekDeadlineNs();
    }

    /**
     * Called by the loop as it starts a turn's tasks: queues the expiry behind them when a timer is
     * due. Reads the clock only when timers are pending.
     */
    void queueExpiryIfDue(Queue<Runnable> tasks) {
        if (expiryQueued || heap.isEmpty() || heap.peekDeadlineNs() - clock.getAsLong() > 0) {
            return;
        }
        expiryQueued = tasks.offer(expireTask);
    }

    private void queueExpiry() {
        if (!expiryQueued) {
            expiryQueued = true;
            // A plain task on the loop's queue allocates nothing.
            loop.execute(expireTask);
        }
    }

    private void onExpireTask() {
        expiryQueued = false;
        expireDue();
    }

    private void arm(long deadlineNs, long delayNs) {
        if (armed != null) {
            armed.cancel(false);
        }
        armedDeadlineNs = deadlineNs;
        armed = scheduler.schedule(scheduledExpiry, delayNs, TimeUnit.NANOSECONDS);
    }

    private void onScheduledExpiry() {
        armed = null;
        armedDeadlineNs = Long.MAX_VALUE;
        expireDue();
    }

    /** Runs the timers due now in deadline order; a timer scheduled for now by one of them runs next turn. */
    void expireDue() {
        int budget = heap.size();
        long nowNs = clock.getAsLong();
        // The handlers (completion delivery, deferred ACKs, the sends they start) read the clock
        // per packet: sampled, as in a read burst.
        LoopClock burstClock = loopClock();
        if (burstClock != null) {
            burstClock.beginBurst();
        }
        try {
            while (budget-- > 0 && heap.peekDeadlineNs() <= nowNs) {
                heap.fireEarliest(nowNs);
                timersFired++;
            }
        } finally {
            if (burstClock != null) {
                burstClock.endBurst();
            }
        }
        if (scheduler != null && !heap.isEmpty()) {
            long next = heap.peekDeadlineNs();
            if (next < armedDeadlineNs) {
                long delayNs = next - clock.getAsLong();
                if (delayNs <= 0) {
                    queueExpiry();
                } else {
                    arm(next, delayNs);
                }
            }
        }
    }
}
