package org.vrdma.vswitch.runtime;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.vrdma.runtime.EventHeap;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * The real-time driver's {@link TimerService}: time is the loop's {@link LoopClock} ({@code
 * System.nanoTime()}, sampled once per few reads inside a read burst), timers live in the
 * same allocation-free {@link EventHeap} the virtual-time scheduler uses, and one Netty task is
 * armed for the earliest deadline. Re-arming happens only when a new timer becomes the earliest, so
 * per-packet timer updates (retransmit timers pushed forward on every ACK) cost no Netty task.
 *
 * <p>Confined to its event loop: engines call it only from that loop's thread.
 */
public final class EventLoopTimerService implements TimerService {
    private final EventLoop eventLoop;
    private final LoopClock clock;
    private final EventHeap timers = new EventHeap(256);
    private final Runnable expireTask = this::onScheduledExpiry;
    private final Runnable immediateTask = this::onImmediateExpiry;
    private boolean immediatePending;
    private long armedDeadlineNs = Long.MAX_VALUE;
    private ScheduledFuture<?> armed;
    private long timersFired;

    public EventLoopTimerService(EventLoop eventLoop) {
        this.eventLoop = eventLoop;
        this.clock = LoopClock.of(eventLoop);
    }

    public EventLoop eventLoop() {
        return eventLoop;
    }

    @Override
    public long nowNs() {
        return clock.nowNs();
    }

    @Override
    public long scheduleAt(long deadlineNs, TimerHandler handler) {
        checkConfined();
        long id = timers.add(deadlineNs, handler);
        if (deadlineNs < armedDeadlineNs) {
            arm(deadlineNs);
        }
        return id;
    }

    @Override
    public boolean cancel(long timerId) {
        checkConfined();
        // The armed task may now fire early with nothing due; it then re-arms for the new head.
        return timers.cancel(timerId);
    }

    public int pendingTimers() {
        return timers.size();
    }

    public long timersFired() {
        return timersFired;
    }

    private void arm(long deadlineNs) {
        long delayNs = deadlineNs - System.nanoTime();
        if (delayNs <= 0) {
            // Due now (a deferred call, a completion drain): a plain task on the loop's queue, which
            // allocates nothing, instead of a scheduled task; the armed future stays for later timers.
            if (!immediatePending) {
                immediatePending = true;
                eventLoop.execute(immediateTask);
            }
            return;
        }
        if (armed != null) {
            armed.cancel(false);
        }
        armedDeadlineNs = deadlineNs;
        armed = eventLoop.schedule(expireTask, delayNs, TimeUnit.NANOSECONDS);
    }

    private void onScheduledExpiry() {
        armed = null;
        armedDeadlineNs = Long.MAX_VALUE;
        expireDue();
    }

    private void onImmediateExpiry() {
        immediatePending = false;
        expireDue();
    }

    private void expireDue() {
        // Bounded: timers that handlers schedule for "now" run on the next turn, not in this loop.
        int budget = timers.size();
        long nowNs = System.nanoTime();
        // The handlers (completion delivery, deferred ACKs, the sends they start) read the clock
        // per packet: sampled, as in a read burst.
        clock.beginBurst();
        try {
            while (budget-- > 0 && timers.peekDeadlineNs() <= nowNs) {
                timers.fireEarliest(nowNs);
                timersFired++;
            }
        } finally {
            clock.endBurst();
        }
        if (!timers.isEmpty() && timers.peekDeadlineNs() < armedDeadlineNs) {
            arm(timers.peekDeadlineNs());
        }
    }

    private void checkConfined() {
        if (!eventLoop.inEventLoop()) {
            throw new IllegalStateException("timers must be used from their event loop");
        }
    }
}
