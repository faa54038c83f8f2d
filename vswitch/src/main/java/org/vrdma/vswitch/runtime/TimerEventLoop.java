package org.vrdma.vswitch.runtime;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * A Netty I/O event loop that also runs the engines' timers (every {@link EventLoopTimerService} on
 * it shares one timer heap): its wait for I/O ends at the earliest of Netty's scheduled tasks and
 * the earliest timer, and each turn queues the due timers' expiry behind the tasks, as Netty does
 * with its own due scheduled tasks. Arming, moving and cancelling a timer then touch only the heap:
 * the RC requester re-arms its probe and retransmission timer after every send without a Netty
 * task per re-arm (each such task was a {@code ScheduledFutureTask} allocated, queued and usually
 * cancelled).
 */
public final class TimerEventLoop extends SingleThreadIoEventLoop {
    private final LoopTimers timers;

    TimerEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
        super(parent, executor, ioHandlerFactory);
        timers = new LoopTimers(this, System::nanoTime, null);
    }

    LoopTimers timers() {
        return timers;
    }

    @Override
    protected boolean fetchFromScheduledTaskQueue(Queue<Runnable> taskQueue) {
        boolean fetchedAll = super.fetchFromScheduledTaskQueue(taskQueue);
        if (!isShuttingDown()) {
            // Like Netty's scheduled tasks, timers stop once the loop shuts down.
            timers.queueExpiryIfDue(taskQueue);
        }
        return fetchedAll;
    }

    @Override
    protected long delayNanos(long currentTimeNanos) {
        long delayNs = super.delayNanos(currentTimeNanos);
        long deadlineNs = timers.nextDeadlineNs();
        if (deadlineNs == Long.MAX_VALUE) {
            return delayNs;
        }
        // At least 1 ns: epoll reads a zero delay as "disarm the timer" and would wait for I/O only.
        return Math.min(delayNs, Math.max(1, deadlineNs - currentTimeNanos));
    }

    @Override
    protected long deadlineNanos() {
        long deadline = super.deadlineNanos();
        long deadlineNs = timers.nextDeadlineNs();
        if (deadlineNs == Long.MAX_VALUE) {
            return deadline;
        }
        // Netty's deadlines count from the ticker's start; the timers' from System.nanoTime's origin.
        return Math.min(deadline, deadlineNs - ticker().initialNanoTime());
    }

    /** A group of {@link TimerEventLoop}s. */
    static final class Group extends MultiThreadIoEventLoopGroup {
        Group(int threads, ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
            super(threads, threadFactory, ioHandlerFactory);
        }

        @Override
        protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
            return new TimerEventLoop(this, executor, ioHandlerFactory);
        }
    }
}
