package org.vrdma.vnic.verbs;

/**
 * A completion queue ({@code struct ibv_cq}): a ring of preallocated work completions that {@link
 * #poll} copies out. When a completion arrives and the ring is full, the queue overruns: it enters
 * the error state, raises {@link AsyncEventType#CQ_ERR}, and every later {@link #poll} fails with
 * EIO, as hardware does.
 */
public final class CompletionQueue {
    private final Context context;
    private final WorkCompletion[] ring;
    private final CompletionChannel channel;
    private long head;
    private long tail;
    private int users;
    private boolean live = true;
    private boolean overrun;
    /** 0: not armed, 1: next solicited or error completion, 2: next completion. */
    private int armed;

    private int unackedEvents;
    /** Told about every published completion before any channel event, or null. */
    private CompletionListener listener;

    CompletionQueue(final Context context, final int cqe, final CompletionChannel channel) {
        this.context = context;
        this.ring = new WorkCompletion[cqe];
        for (int i = 0; i < cqe; i++) {
            ring[i] = new WorkCompletion();
        }
        this.channel = channel;
    }

    /** Entries the queue holds ({@code cq->cqe}). */
    public int capacity() {
        return ring.length;
    }

    /** The channel events go to, or null. */
    public CompletionChannel channel() {
        return channel;
    }

    /**
     * Moves up to {@code wcs.length} completions into the caller's reusable array ({@code
     * ibv_poll_cq}).
     *
     * @return number of completions written, 0 if none
     * @throws VerbsException EIO after an overrun
     */
    public int poll(final WorkCompletion[] wcs) {
        return poll(wcs, wcs.length);
    }

    /** Like {@link #poll(WorkCompletion[])} for at most {@code max} entries. */
    public int poll(final WorkCompletion[] wcs, final int max) {
        checkLive();
        if (overrun) {
            throw new VerbsException(Errno.EIO, "completion queue overrun");
        }
        int n = 0;
        while (n < max && head != tail) {
            wcs[n++].copyFrom(ring[(int) (head % ring.length)]);
            head++;
        }
        return n;
    }

    /** Completions waiting to be polled. */
    public int size() {
        return (int) (tail - head);
    }

    /**
     * Arms the queue ({@code ibv_req_notify_cq}): the next completion (or, with {@code
     * solicitedOnly}, the next solicited or unsuccessful one) puts one event on the channel.
     */
    public void requestNotify(final boolean solicitedOnly) {
        checkLive();
        if (channel == null) {
            throw new VerbsException(Errno.EINVAL, "completion queue has no channel");
        }
        // Arming for all events widens an earlier solicited-only request, never narrows it.
        armed = Math.max(armed, solicitedOnly ? 1 : 2);
    }

    /** Acknowledges {@code n} events taken from the channel ({@code ibv_ack_cq_events}). */
    public void ackEvents(final int n) {
        if (n < 0 || n > unackedEvents) {
            throw new VerbsException(Errno.EINVAL, "acknowledging more events than were delivered");
        }
        unackedEvents -= n;
    }

    /**
     * Installs a callback run on every published completion, before the channel event it may
     * cause (or null): a driver that mirrors completions elsewhere moves them out here.
     */
    public void listener(final CompletionListener l) {
        this.listener = l;
    }

    /** True after an overrun. */
    public boolean isInError() {
        return overrun;
    }

    /** Destroys the queue ({@code ibv_destroy_cq}); EBUSY while queue pairs use it or events are unacked. */
    public void destroy() {
        checkLive();
        if (users != 0) {
            throw new VerbsException(Errno.EBUSY, users + " queues still complete on this CQ");
        }
        if (unackedEvents != 0) {
            throw new VerbsException(Errno.EBUSY, unackedEvents + " completion events not acknowledged");
        }
        live = false;
        if (channel != null) {
            channel.detach();
        }
        context.onCqDestroyed();
    }

    /** Next free slot to fill, or null if the queue overran (the caller then drops the completion). */
    WorkCompletion claim() {
        if (overrun) {
            return null;
        }
        if (tail - head == ring.length) {
            overrun = true;
            context.raise(AsyncEventType.CQ_ERR, this);
            return null;
        }
        final WorkCompletion wc = ring[(int) (tail % ring.length)];
        wc.clear();
        return wc;
    }

    /** Publishes the slot returned by {@link #claim()}. */
    void publish(final boolean solicited) {
        tail++;
        final WorkCompletion wc = ring[(int) ((tail - 1) % ring.length)];
        wc.solicited = solicited;
        final boolean failed = wc.status != WcStatus.SUCCESS;
        if (listener != null) {
            listener.onCompletion(this);
        }
        if (armed == 2 || (armed == 1 && (solicited || failed))) {
            armed = 0;
            unackedEvents++;
            channel.onEvent(this);
        }
    }

    void attachUser() {
        checkLive();
        users++;
    }

    void detachUser() {
        users--;
    }

    private void checkLive() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "completion queue destroyed");
        }
    }
}
