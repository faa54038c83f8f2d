package org.vrdma.vnic.verbs;

/**
 * An open device context ({@code struct ibv_context}): the parent of protection domains, completion
 * queues and channels. Closing fails with EBUSY while any of them is alive.
 */
public final class Context {
    private final Device device;
    private int children;
    private boolean open = true;

    Context(final Device device) {
        this.device = device;
    }

    public Device device() {
        return device;
    }

    /** Device attributes ({@code ibv_query_device}). */
    public DeviceAttributes queryDevice() {
        return device.attributes();
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    public ProtectionDomain allocatePd() {
        checkOpen();
        device.reserve(Device.Resource.PD);
        children++;
        return new ProtectionDomain(this);
    }

    /** Creates a completion channel ({@code ibv_create_comp_channel}). */
    public CompletionChannel createCompletionChannel() {
        checkOpen();
        children++;
        return new CompletionChannel(this);
    }

    /**
     * Creates a completion queue of at least {@code cqe} entries ({@code ibv_create_cq}).
     *
     * @param channel where events go after {@link CompletionQueue#requestNotify}, or null
     * @throws VerbsException EINVAL if {@code cqe} is not in {@code [1, max_cqe]}
     */
    public CompletionQueue createCompletionQueue(final int cqe, final CompletionChannel channel) {
        checkOpen();
        if (cqe < 1 || cqe > device.attributes().maxCqe()) {
            throw new VerbsException(
                    Errno.EINVAL,
                    "cqe " + cqe + " outside [1, " + device.attributes().maxCqe() + "]");
        }
        device.reserve(Device.Resource.CQ);
        if (channel != null) {
            channel.attach();
        }
        children++;
        return new CompletionQueue(this, cqe, channel);
    }

    /** Creates a queue pair ({@code ibv_create_qp}); {@code attr.cap} is updated with the sizes granted. */
    public QueuePair createQueuePair(final ProtectionDomain pd, final QpInitAttr attr) {
        checkOpen();
        if (pd.context() != this) {
            throw new VerbsException(Errno.EINVAL, "protection domain belongs to another context");
        }
        return QueuePair.create(this, pd, attr);
    }

    /** Creates a shared receive queue ({@code ibv_create_srq}). */
    public SharedReceiveQueue createSharedReceiveQueue(
            final ProtectionDomain pd, final int maxWr, final int maxSge, final int srqLimit) {
        checkOpen();
        pd.checkAllocated();
        final DeviceAttributes a = device.attributes();
        if (maxWr < 1
                || maxWr > a.maxSrqWr()
                || maxSge < 1
                || maxSge > a.maxSrqSge()
                || srqLimit < 0
                || srqLimit > maxWr) {
            throw new VerbsException(Errno.EINVAL, "invalid shared receive queue size");
        }
        device.reserve(Device.Resource.SRQ);
        pd.onChildCreated();
        return new SharedReceiveQueue(pd, maxWr, maxSge, srqLimit);
    }

    /** Closes the context ({@code ibv_close_device}). */
    public void close() {
        checkOpen();
        if (children != 0) {
            throw new VerbsException(Errno.EBUSY, children + " objects still open in this context");
        }
        open = false;
        device.onContextClosed();
    }

    void raise(final AsyncEventType type, final Object source) {
        device.raise(type, source);
    }

    void onPdDeallocated() {
        children--;
        device.release(Device.Resource.PD);
    }

    void onCqDestroyed() {
        children--;
        device.release(Device.Resource.CQ);
    }

    void onChannelDestroyed() {
        children--;
    }

    private void checkOpen() {
        if (!open) {
            throw new VerbsException(Errno.EINVAL, "context closed");
        }
    }
}
