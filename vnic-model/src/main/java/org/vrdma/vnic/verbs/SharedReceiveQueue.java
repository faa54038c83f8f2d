package org.vrdma.vnic.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): receives consumed by several queue pairs of one
 * protection domain. When armed with a limit, it raises {@link AsyncEventType#SRQ_LIMIT_REACHED} once
 * the number of posted receives drops below it, then disarms (as {@code ibv_modify_srq} specifies).
 */
public final class SharedReceiveQueue {
    /** {@link #modify} mask bit: change the maximum number of receives. */
    public static final int ATTR_MAX_WR = 1;
    /** {@link #modify} mask bit: arm the limit event. */
    public static final int ATTR_LIMIT = 1 << 1;

    private final ProtectionDomain pd;
    private final ReceiveQueue queue;
    private int limit;
    private int users;
    private boolean live = true;
    private Runnable receiveRefill;

    SharedReceiveQueue(final ProtectionDomain pd, final int maxWr, final int maxSge, final int limit) {
        this.pd = pd;
        this.queue = new ReceiveQueue(maxWr, maxSge);
        this.limit = limit;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** Posts a receive ({@code ibv_post_srq_recv}). */
    public void postRecv(final RecvWorkRequest wr) {
        checkLive();
        queue.post(wr, pd, pd.context().device());
    }

    /** Receives posted and not yet consumed. */
    public int size() {
        return queue.size();
    }

    public int maxWr() {
        return queue.capacity();
    }

    /** The armed limit, 0 when disarmed. */
    public int limit() {
        return limit;
    }

    /**
     * Modifies the queue ({@code ibv_modify_srq}): {@link #ATTR_MAX_WR} resizes it (as a device with
     * {@code IBV_DEVICE_SRQ_RESIZE}: from 1 up to the device's {@code max_srq_wr}, never below the
     * receives posted; the posted ones are kept), {@link #ATTR_LIMIT} arms the limit event (0
     * disarms it). All or nothing: EINVAL leaves the queue as it was.
     */
    public void modify(final int maxWr, final int srqLimit, final int mask) {
        checkLive();
        if ((mask & ~(ATTR_MAX_WR | ATTR_LIMIT)) != 0) {
            throw new VerbsException(Errno.EINVAL, "unsupported shared receive queue modification");
        }
        final boolean resize = (mask & ATTR_MAX_WR) != 0;
        final int capacity = resize ? maxWr : queue.capacity();
        if (resize && (maxWr < 1 || maxWr > pd.context().device().attributes().maxSrqWr() || maxWr < queue.size())) {
            throw new VerbsException(Errno.EINVAL, "max_wr " + maxWr + " (posted " + queue.size() + ", device limit)");
        }
        final int newLimit = (mask & ATTR_LIMIT) != 0 ? srqLimit : limit;
        if ((mask & ATTR_LIMIT) != 0 && (srqLimit < 0 || srqLimit > capacity)) {
            throw new VerbsException(Errno.EINVAL, "srq_limit " + srqLimit + " out of range");
        }
        if (resize && capacity != queue.capacity()) {
            queue.resize(capacity);
        }
        limit = newLimit;
    }

    /** Destroys the queue; EBUSY while queue pairs use it. */
    public void destroy() {
        checkLive();
        if (users != 0) {
            throw new VerbsException(Errno.EBUSY, users + " queue pairs use this shared receive queue");
        }
        live = false;
        pd.context().device().release(Device.Resource.SRQ);
        pd.onChildDestroyed();
    }

    ReceiveQueue queue() {
        return queue;
    }

    /**
     * Sets what runs when an arriving message finds this queue empty, before it is refused (see
     * {@link QueuePair#receiveRefill}), and when a message leaves it below the armed limit, before
     * the limit event is raised; it may call {@link #postRecv}. Null removes it.
     */
    public void receiveRefill(final Runnable refill) {
        this.receiveRefill = refill;
    }

    boolean takeInto(final RecvWqe dst) {
        if (queue.size() == 0 && receiveRefill != null) {
            receiveRefill.run();
        }
        if (!queue.takeInto(dst)) {
            return false;
        }
        if (limit > 0 && queue.size() < limit && receiveRefill != null) {
            // Receives the driver was handed but has not passed on yet are in the queue too.
            receiveRefill.run();
        }
        if (limit > 0 && queue.size() < limit) {
            limit = 0;
            pd.context().raise(AsyncEventType.SRQ_LIMIT_REACHED, this);
        }
        return true;
    }

    void attach() {
        checkLive();
        users++;
    }

    void detach() {
        users--;
    }

    private void checkLive() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "shared receive queue destroyed");
        }
    }
}
