package org.vrdma.verbs;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;

/**
 * A completion queue ({@code struct ibv_cq}). The device's event loop moves each completion, as the
 * transport produces it, into a single-producer/single-consumer ring of {@code cqe} entries; {@link
 * #poll} copies out of that ring into the caller's reusable {@link IbvWc} array without blocking,
 * without a system call and without allocating. One thread at a time polls a CQ.
 *
 * <p>When a completion arrives and the ring is full, the CQ overruns, as hardware does: the
 * completion is lost and every later {@link #poll} fails with EIO.
 *
 * <p>On an attached device the ring is a memfd shared with the vNIC process, which fills it; when
 * it is full, completions wait in the vNIC until the application polls.
 */
public final class IbvCq implements AutoCloseable {
    private static final int DRAIN_BATCH = 64;

    private final IbvContext context;
    private final CompletionQueue cq;
    private final CompletionChannel hook;
    private final IbvCompChannel channel;
    private final IbvWc[] ring;
    /** Next entry the loop fills; published with release. */
    private final AtomicLong tail = new AtomicLong();
    /** Next entry the poller takes; published with release so the loop sees free space. */
    private final AtomicLong head = new AtomicLong();
    /** 0: not armed, 1: next solicited or error completion, 2: next completion. */
    private final AtomicInteger armed = new AtomicInteger();

    private final AtomicInteger unackedEvents = new AtomicInteger();
    private volatile boolean overrun;
    private volatile boolean live = true;
    // Confined to the loop.
    private final WorkCompletion[] batch = new WorkCompletion[DRAIN_BATCH];
    private long producerTail;
    /** The completion ring of a CQ in a vNIC process, or null on an embedded host. */
    final AttachedCq attached;
    /** Asynchronous events (CQ_ERR) taken but not acknowledged: destroying is EBUSY until they are. */
    final java.util.concurrent.atomic.AtomicInteger unackedAsyncEvents =
            new java.util.concurrent.atomic.AtomicInteger();

    /** A CQ of an attached context. */
    IbvCq(IbvContext context, IbvCompChannel channel, AttachedCq attached) {
        this.context = context;
        this.cq = null;
        this.hook = null;
        this.channel = channel;
        this.ring = null;
        this.attached = attached;
    }

    IbvCq(IbvContext context, CompletionQueue cq, CompletionChannel hook, IbvCompChannel channel, int cqe) {
        this.context = context;
        this.cq = cq;
        this.hook = hook;
        this.channel = channel;
        this.ring = IbvWc.array(cqe);
        this.attached = null;
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
        // Completions reach the ring as the transport publishes them: one notification per completion.
        hook.handler(this::onModelEvent);
        cq.requestNotify(false);
    }

    /** The context. */
    public IbvContext context() {
        return context;
    }

    /** The channel events go to, or null. */
    public IbvCompChannel channel() {
        return channel;
    }

    /** Entries the queue holds ({@code cq->cqe}). */
    public int capacity() {
        return attached != null ? attached.capacity() : ring.length;
    }

    /**
     * Moves up to {@code wcs.length} completions into the caller's array ({@code ibv_poll_cq}).
     *
     * @return completions written, 0 if none
     * @throws IbvIoException after an overrun
     * @throws IbvInvalidArgumentException after the CQ was destroyed
     */
    public int poll(IbvWc[] wcs) {
        return poll(wcs, wcs.length);
    }

    /** Like {@link #poll(IbvWc[])}, for at most {@code max} entries. */
    public int poll(IbvWc[] wcs, int max) {
        if (!live) {
            throw new IbvInvalidArgumentException("completion queue destroyed");
        }
        if (overrun) {
            throw new IbvIoException("completion queue overrun");
        }
        if (attached != null) {
            return attached.poll(wcs, max);
        }
        long h = head.get();
        long t = tail.get();
        int n = 0;
        int limit = Math.min(max, wcs.length);
        while (n < limit && h < t) {
            wcs[n++].copyFrom(ring[(int) (h % ring.length)]);
            h++;
        }
        if (n > 0) {
            head.setRelease(h);
        }
        return n;
    }

    /** Completions waiting to be polled. */
    public int size() {
        if (attached != null) {
            return attached.size();
        }
        return (int) (tail.get() - head.get());
    }

    /**
     * Arms the queue ({@code ibv_req_notify_cq}): the next completion (with {@code solicitedOnly},
     * the next solicited or unsuccessful one) puts one event on the channel. Completions already in
     * the queue raise none, so poll again after arming.
     *
     * @throws IbvInvalidArgumentException if the CQ has no channel
     */
    public void reqNotify(boolean solicitedOnly) {
        if (!live) {
            throw new IbvInvalidArgumentException("completion queue destroyed");
        }
        if (channel == null) {
            throw new IbvInvalidArgumentException("completion queue has no channel");
        }
        if (attached != null) {
            attached.reqNotify(context, solicitedOnly);
            return;
        }
        int level = solicitedOnly ? 1 : 2;
        // Arming for all completions widens a solicited-only request, never narrows it.
        armed.accumulateAndGet(level, Math::max);
    }

    /** Acknowledges {@code n} events taken from the channel ({@code ibv_ack_cq_events}). */
    public void ackEvents(int n) {
        while (true) {
            int u = unackedEvents.get();
            if (n < 0 || n > u) {
                throw new IbvInvalidArgumentException("acknowledging " + n + " events, " + u + " unacknowledged");
            }
            if (unackedEvents.compareAndSet(u, u - n)) {
                if (attached != null && n > 0) {
                    attached.ackEvents(n);
                }
                return;
            }
        }
    }

    /** True after an overrun. */
    public boolean isOverrun() {
        return overrun;
    }

    /**
     * Destroys the queue ({@code ibv_destroy_cq}); EBUSY while queue pairs complete on it or events
     * taken from the channel are unacknowledged.
     */
    public void destroy() {
        IbvQp.checkNoUnackedAsyncEvents(unackedAsyncEvents);
        if (attached != null) {
            synchronized (context) {
                destroyAttached();
            }
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

    /** Guarded by the context: EBUSY while QPs use the CQ (the vNIC says so) or events are unacknowledged. */
    private void destroyAttached() {
        if (!live) {
            throw new IbvInvalidArgumentException("completion queue destroyed");
        }
        if (unackedEvents.get() != 0) {
            throw new IbvBusyException(unackedEvents.get() + " completion events not acknowledged");
        }
        attached.destroy(context);
        live = false;
        if (channel != null) {
            channel.cqs--;
            channel.dropEventsOf(this);
        }
        context.forget(this);
    }

    CompletionQueue model() {
        return cq;
    }

    void onEventTaken() {
        unackedEvents.incrementAndGet();
    }

    private void destroyOnLoop() {
        if (!live) {
            throw new IbvInvalidArgumentException("completion queue destroyed");
        }
        if (unackedEvents.get() != 0) {
            throw new IbvBusyException(unackedEvents.get() + " completion events not acknowledged");
        }
        forceDestroyOnLoop();
    }

    void forceDestroyOnLoop() {
        drainModelEvents();
        cq.destroy();
        hook.handler(null);
        hook.destroy();
        live = false;
        if (channel != null) {
            channel.cqs--;
            channel.dropEventsOf(this);
        }
        context.cqs.remove(this);
    }

    // ---------------------------------------------------------------- loop side

    private void onModelEvent(CompletionQueue q) {
        drainModelEvents();
        int n;
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                produce(batch[i]);
            }
        }
        cq.requestNotify(false);
    }

    private void drainModelEvents() {
        int events = 0;
        while (hook.getEvent() != null) {
            events++;
        }
        if (events > 0) {
            cq.ackEvents(events);
        }
    }

    private void produce(WorkCompletion wc) {
        IbvQp qp = context.qp(wc.qpNum);
        long wrId = wc.wrId;
        if (qp != null) {
            wrId = qp.onCompletion(wc);
        }
        IbvWc e = claim();
        if (e == null) {
            return;
        }
        e.wrId = wrId;
        e.status = wc.status;
        e.opcode = wc.opcode;
        e.vendorErr = wc.vendorErr;
        e.byteLen = wc.byteLen;
        e.immData = wc.immData;
        e.qpNum = wc.qpNum;
        e.srcQp = wc.srcQp;
        e.wcFlags = wc.wcFlags;
        e.pkeyIndex = wc.pkeyIndex;
        e.srcIpv4 = wc.srcIpv4;
        e.solicited = wc.solicited;
        publish(e);
    }

    /** On the loop: a completion the facade makes itself (a post the vNIC refused after the fact). */
    void produceLocal(long wrId, WcStatus status, WcOpcode opcode, int qpNum) {
        IbvWc e = claim();
        if (e == null) {
            return;
        }
        e.wrId = wrId;
        e.status = status;
        e.opcode = opcode;
        e.vendorErr = 0;
        e.byteLen = 0;
        e.immData = 0;
        e.qpNum = qpNum;
        e.srcQp = 0;
        e.wcFlags = 0;
        e.pkeyIndex = 0;
        e.srcIpv4 = 0;
        e.solicited = false;
        publish(e);
    }

    private IbvWc claim() {
        if (overrun) {
            return null;
        }
        if (producerTail - head.getAcquire() == ring.length) {
            overrun = true;
            return null;
        }
        return ring[(int) (producerTail % ring.length)];
    }

    private void publish(IbvWc e) {
        producerTail++;
        // A volatile store, not a release store: the read of armed below must not move before it,
        // or a poller that armed after an empty poll could miss both this entry and its event.
        tail.set(producerTail);
        int a = armed.get();
        if (a != 0 && (a == 2 || e.solicited || e.status != WcStatus.SUCCESS) && armed.compareAndSet(a, 0)) {
            channel.onEvent(this);
        }
    }
}
