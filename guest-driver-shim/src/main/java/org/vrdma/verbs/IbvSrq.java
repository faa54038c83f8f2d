package org.vrdma.verbs;

import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SharedReceiveQueue;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A shared receive queue ({@code struct ibv_srq}): receives consumed by several queue pairs of one
 * protection domain. Posting follows the same rules as {@link IbvQp#postRecv}: EINVAL for too many
 * elements or a negative length, ENOMEM once {@code maxWr} receives are outstanding. On an attached
 * device the receives go through a ring shared with the vNIC process, laid out as the native
 * library's; the checks and errors are the same in both modes.
 */
public final class IbvSrq implements AutoCloseable {
    private final IbvContext context;
    private final IbvPd pd;
    private final SharedReceiveQueue srq;
    /** Asynchronous events taken but not acknowledged: destroying is EBUSY until they are. */
    final java.util.concurrent.atomic.AtomicInteger unackedAsyncEvents =
            new java.util.concurrent.atomic.AtomicInteger();

    private volatile int maxWr;
    private final int maxSge;
    /** Embedded: the receives on their way to the model; null when attached. */
    volatile RecvRing ring;
    /** The ring and handle in a vNIC process, or null on an embedded host. */
    final AttachedSrq attached;

    private final Runnable drainTask = this::drain;
    private final java.util.function.Consumer<RecvWorkRequest> sink = this::postToModel;
    private volatile boolean live = true;
    private long refusedPosts;

    IbvSrq(IbvContext context, IbvPd pd, SharedReceiveQueue srq, int maxWr, int maxSge) {
        this.context = context;
        this.pd = pd;
        this.srq = srq;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.ring = new RecvRing(maxWr, maxSge);
        this.attached = null;
        // A message finding the queue empty takes the receives posted but not yet drained.
        srq.receiveRefill(drainTask);
    }

    /** A shared receive queue of an attached context, with the sizes the vNIC granted. */
    IbvSrq(IbvContext context, IbvPd pd, AttachedSrq attached, int maxWr, int maxSge) {
        this.context = context;
        this.pd = pd;
        this.srq = null;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.ring = null;
        this.attached = attached;
    }

    /** The receives it holds at most ({@code max_wr} granted). */
    public int maxWr() {
        return maxWr;
    }

    /** Scatter/gather elements per receive ({@code max_sge} granted). */
    public int maxSge() {
        return maxSge;
    }

    /** The limit armed now ({@code ibv_query_srq}'s {@code srq_limit}): 0 once the event fired. */
    public int limit() {
        checkLive();
        if (attached != null) {
            return attached.query(context)[2];
        }
        return context.loop.call(srq::limit);
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
        checkLive();
        if (attached != null) {
            RecvRing.check(wr, maxSge);
            attached.postRecv(context, wr);
            return;
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

    /**
     * Modifies the queue ({@code ibv_modify_srq}): {@link IbvSrqAttr#MAX_WR} resizes it (1 up to the
     * device's {@code max_srq_wr}, never below the receives posted and not yet consumed; the posted
     * ones stay, in order), {@link IbvSrqAttr#LIMIT} arms the limit event. All or nothing. No thread
     * may post to the queue while it is resized.
     *
     * @throws IbvInvalidArgumentException an unknown mask bit, a size out of range or below the
     *     receives posted, a limit above the (new) size
     */
    public void modify(IbvSrqAttr attr, int mask) {
        checkLive();
        if (attr == null || (mask & ~(IbvSrqAttr.MAX_WR | IbvSrqAttr.LIMIT)) != 0) {
            throw new IbvInvalidArgumentException("unsupported shared receive queue modification");
        }
        boolean resize = (mask & IbvSrqAttr.MAX_WR) != 0;
        if (resize && (attr.maxWr < 1 || attr.maxWr > context.queryDevice().maxSrqWr())) {
            throw new IbvInvalidArgumentException("max_wr " + attr.maxWr + " beyond the device's limits");
        }
        if (attached != null) {
            synchronized (context) {
                checkLive();
                attached.modify(context, mask, attr.maxWr, attr.srqLimit);
            }
        } else {
            context.loop.call(() -> {
                drain(); // everything posted is in the model before its size is checked
                int modelMask = (resize ? SharedReceiveQueue.ATTR_MAX_WR : 0)
                        | ((mask & IbvSrqAttr.LIMIT) != 0 ? SharedReceiveQueue.ATTR_LIMIT : 0);
                srq.modify(attr.maxWr, attr.srqLimit, modelMask);
                if (resize) {
                    ring = ring.resized(attr.maxWr, maxSge);
                }
                return null;
            });
        }
        if (resize) {
            maxWr = attr.maxWr;
        }
    }

    /** The queue's attributes ({@code ibv_query_srq}). */
    public IbvSrqAttr query() {
        checkLive();
        IbvSrqAttr a = new IbvSrqAttr();
        if (attached != null) {
            int[] q;
            synchronized (context) {
                q = attached.query(context);
            }
            a.maxWr = q[0];
            a.maxSge = q[1];
            a.srqLimit = q[2];
        } else {
            a.maxWr = context.loop.call(srq::maxWr);
            a.maxSge = maxSge;
            a.srqLimit = context.loop.call(srq::limit);
        }
        return a;
    }

    /** Arms the limit event ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}). */
    public void modifyLimit(int srqLimit) {
        checkLive();
        if (attached != null) {
            synchronized (context) {
                checkLive();
                attached.modifyLimit(context, srqLimit);
            }
            return;
        }
        context.loop.call(() -> {
            srq.modify(0, srqLimit, SharedReceiveQueue.ATTR_LIMIT);
            return null;
        });
    }

    /** Destroys the queue ({@code ibv_destroy_srq}); EBUSY while queue pairs use it. */
    public void destroy() {
        IbvQp.checkNoUnackedAsyncEvents(unackedAsyncEvents);
        if (attached != null) {
            destroyAttached();
            return;
        }
        context.loop.run(this::destroyOnLoop);
    }

    /** Destroys the queue unless that was already done. */
    @Override
    public void close() {
        if (attached != null) {
            synchronized (context) {
                if (live) {
                    destroyAttached();
                }
            }
            return;
        }
        context.loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    /** The vNIC's handle of an attached SRQ (-1 for an embedded one). */
    int attachedHandle() {
        return attached != null ? attached.handle : -1;
    }

    private void destroyAttached() {
        synchronized (context) {
            checkLive();
            attached.destroy(context); // EBUSY while queue pairs use it
            live = false;
            context.forget(this);
        }
    }

    private void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("shared receive queue destroyed");
        }
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
        if (attached != null) {
            return 0; // the vNIC process counts the receives it refuses itself
        }
        return context.loop.call(() -> refusedPosts);
    }
}
