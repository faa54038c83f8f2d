package org.vrdma.verbs;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): a CQ armed with {@link
 * IbvCq#reqNotify} puts one event here when a matching completion arrives; {@link #getCqEvent}
 * waits for one ({@code ibv_get_cq_event}), and each event taken must be acknowledged with {@link
 * IbvCq#ackEvents} before the CQ is destroyed. One thread at a time waits on a channel.
 *
 * <p>The device's event loop only enqueues and wakes the waiting thread; it never blocks.
 */
public final class IbvCompChannel implements AutoCloseable {
    private final IbvContext context;
    private final ConcurrentLinkedQueue<IbvCq> events = new ConcurrentLinkedQueue<>();
    private volatile Thread waiter;
    private volatile boolean live = true;
    /** CQs using this channel; confined to the loop. */
    int cqs;

    IbvCompChannel(IbvContext context) {
        this.context = context;
    }

    /** The context. */
    public IbvContext context() {
        return context;
    }

    /**
     * Waits up to {@code timeout} for the next event and returns its CQ, or null on timeout. The
     * CQ is disarmed: call {@link IbvCq#reqNotify} again for the next event.
     *
     * @throws IbvInvalidArgumentException if the channel was destroyed
     */
    public IbvCq getCqEvent(Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        IbvCq cq = events.poll();
        if (cq != null) {
            return taken(cq);
        }
        waiter = Thread.currentThread();
        try {
            while (true) {
                checkLive();
                cq = events.poll();
                if (cq != null) {
                    return taken(cq);
                }
                long leftNs = deadlineNs - System.nanoTime();
                if (leftNs <= 0) {
                    return null;
                }
                LockSupport.parkNanos(this, leftNs);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        } finally {
            waiter = null;
        }
    }

    /** The next event's CQ if one is pending, else null; never blocks. */
    public IbvCq pollCqEvent() {
        checkLive();
        IbvCq cq = events.poll();
        return cq == null ? null : taken(cq);
    }

    /** Destroys the channel ({@code ibv_destroy_comp_channel}); EBUSY while CQs use it. */
    public void destroy() {
        context.loop.run(this::destroyOnLoop);
    }

    /** Destroys the channel unless that was already done. */
    @Override
    public void close() {
        context.loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    private static IbvCq taken(IbvCq cq) {
        cq.onEventTaken();
        return cq;
    }

    /** On the loop: an armed CQ got a matching completion. */
    void onEvent(IbvCq cq) {
        events.offer(cq);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    void dropEventsOf(IbvCq cq) {
        events.removeIf(c -> c == cq);
    }

    void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("completion channel destroyed");
        }
    }

    void destroyOnLoop() {
        checkLive();
        if (cqs != 0) {
            throw new IbvBusyException(cqs + " completion queues use this channel");
        }
        live = false;
        context.channels.remove(this);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }
}
