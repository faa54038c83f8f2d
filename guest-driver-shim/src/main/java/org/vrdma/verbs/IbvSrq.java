package org.vrdma.verbs;

import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SharedReceiveQueue;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A shared receive queue ({@code struct ibv_srq}): receives consumed by several RC queue pairs of
 * one protection domain. Posting follows the same rules as {@link IbvQp#postRecv}.
 */
public final class IbvSrq implements AutoCloseable {
    private final IbvContext context;
    private final IbvPd pd;
    private final SharedReceiveQueue srq;
    /** Asynchronous events taken but not acknowledged: destroying is EBUSY until they are. */
    final java.util.concurrent.atomic.AtomicInteger unackedAsyncEvents =
            new java.util.concurrent.atomic.AtomicInteger();

    private final int maxSge;
    final RecvRing ring;
    private final Runnable drainTask = this::drain;
    private final java.util.function.Consumer<RecvWorkRequest> sink = this::postToModel;
    private volatile boolean live = true;
    private long refusedPosts;

    IbvSrq(IbvContext context, IbvPd pd, SharedReceiveQueue srq, int maxWr, int maxSge) {
        this.context = context;
        this.pd = pd;
        this.srq = srq;
        this.maxSge = maxSge;
        this.ring = new RecvRing(maxWr, maxSge);
    }

    /** The protection domain. */
    public IbvPd pd() {
        return pd;
    }

    /**
     * Posts a receive ({@code ibv_post_srq_recv}).
     *
     * @throws IbvInvalidArgumentException too many elements, a negative length, a destroyed SRQ
     * @throws IbvNoMemoryException the queue is full
     */
    public void postRecv(IbvRecvWr wr) {
        if (!live) {
            throw new IbvInvalidArgumentException("shared receive queue destroyed");
        }
        if (!ring.offer(wr, maxSge)) {
            throw new IbvNoMemoryException(org.vrdma.vnic.verbs.Errno.ENOMEM, "shared receive queue full");
        }
        if (context.loop.inLoop()) {
            drain();
        } else if (!ring.scheduled.get() && ring.scheduled.compareAndSet(false, true)) {
            context.loop.execute(drainTask);
        }
    }

    /** Arms the limit event ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}). */
    public void modifyLimit(int srqLimit) {
        context.loop.call(() -> {
            srq.modify(0, srqLimit, SharedReceiveQueue.ATTR_LIMIT);
            return null;
        });
    }

    /** Destroys the queue ({@code ibv_destroy_srq}); EBUSY while queue pairs use it. */
    public void destroy() {
        IbvQp.checkNoUnackedAsyncEvents(unackedAsyncEvents);
        context.loop.run(this::destroyOnLoop);
    }

    /** Destroys the queue unless that was already done. */
    @Override
    public void close() {
        context.loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    SharedReceiveQueue model() {
        return srq;
    }

    void destroyOnLoop() {
        if (!live) {
            throw new IbvInvalidArgumentException("shared receive queue destroyed");
        }
        srq.destroy();
        live = false;
        context.srqs.remove(this);
    }

    private void drain() {
        ring.drain(sink);
    }

    private void postToModel(RecvWorkRequest wr) {
        if (!live) {
            return;
        }
        try {
            srq.postRecv(wr);
        } catch (VerbsException e) {
            // Validated when posted; only a race with destruction lands here: the slot is freed and
            // the receive counted as refused, since no queue pair exists to complete it on.
            ring.retireOne();
            refusedPosts++;
        }
    }

    /** Receives the device refused after they were posted (a race with destruction). */
    public long refusedPosts() {
        return context.loop.call(() -> refusedPosts);
    }
}
