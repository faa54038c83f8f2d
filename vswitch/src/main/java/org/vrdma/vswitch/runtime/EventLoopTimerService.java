package org.vrdma.vswitch.runtime;

import io.netty.channel.EventLoop;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * The real-time driver's {@link TimerService}: time is the loop's {@link LoopClock} ({@code
 * System.nanoTime()}, sampled once per few reads inside a read burst or a turn's due timers), timers
 * live in the same allocation-free {@link org.vrdma.runtime.EventHeap} the virtual-time scheduler
 * uses.
 *
 * <p>On a {@link TimerEventLoop} (what {@link NettyRuntime} creates) every service of the loop shares
 * the loop's timers, and the loop wakes for the earliest deadline itself: scheduling, re-arming and
 * cancelling a timer allocate nothing and schedule no Netty task, and a cancelled timer wakes
 * nobody. On any other event loop the service keeps its own timers and arms one Netty scheduled
 * task for the earliest deadline, moved only when a new timer becomes the earliest. Either way a
 * timer due now runs in a reused task queued on the loop, after the event that is running now.
 *
 * <p>Confined to its event loop: engines call it only from that loop's thread.
 */
public final class EventLoopTimerService implements TimerService {
    private final EventLoop eventLoop;
    private final LoopClock clock;
    private final LoopTimers timers;

    public EventLoopTimerService(EventLoop eventLoop) {
        this.eventLoop = eventLoop;
        this.clock = LoopClock.of(eventLoop);
        this.timers = eventLoop instanceof TimerEventLoop t
                ? t.timers()
                : new LoopTimers(eventLoop, System::nanoTime, eventLoop);
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
        return timers.add(deadlineNs, handler);
    }

    @Override
    public boolean cancel(long timerId) {
        checkConfined();
        return timers.cancel(timerId);
    }

    /** Timers pending; on a {@link TimerEventLoop}, those of every service on the loop. */
    public int pendingTimers() {
        return timers.pending();
    }

    /** Timers that fired; on a {@link TimerEventLoop}, those of every service on the loop. */
    public long timersFired() {
        return timers.fired();
    }

    /** Whether the loop wakes for the timers itself, with no Netty task per deadline. */
    public boolean loopDriven() {
        return eventLoop instanceof TimerEventLoop;
    }

    private void checkConfined() {
        if (!eventLoop.inEventLoop()) {
            throw new IllegalStateException("timers must be used from their event loop");
        }
    }
}
