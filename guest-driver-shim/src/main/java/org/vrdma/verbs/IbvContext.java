package org.vrdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.vrdma.shim.ControlProtocol;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.SharedReceiveQueue;

/**
 * An open device context ({@code struct ibv_context}): queries, and the parent of protection
 * domains, completion channels, completion queues, queue pairs and shared receive queues.
 *
 * <p>Control calls (everything but posting and polling) are thread-safe: on an embedded host they
 * run on the device's event loop and the caller waits; on an attached device ({@link
 * IbvDevice#isAttached()}) they are requests on the context's control connection to the vNIC
 * process, one at a time. {@link #close()} fails with EBUSY while objects of the context are alive,
 * as {@code ibv_close_device} does.
 */
public final class IbvContext implements AutoCloseable {
    private final IbvDevice device;
    private final Context context;
    final HostLoop loop;

    // Confined to the loop: what the context owns, so that closing the host can destroy it.
    final List<IbvQp> qps = new ArrayList<>();
    final List<IbvSrq> srqs = new ArrayList<>();
    final List<IbvCq> cqs = new ArrayList<>();
    final List<IbvCompChannel> channels = new ArrayList<>();
    final List<IbvPd> pds = new ArrayList<>();
    private final IbvQp[] qpByIndex;

    /** Registered regions by key index, read by posting threads to copy inline data. */
    final AtomicReferenceArray<IbvMr> mrByIndex;

    /** The vNIC process this context is attached to, or null for an embedded host. */
    final AttachedContext attached;

    private boolean open = true;

    /** Asynchronous events not yet taken by {@link #getAsyncEvent}. */
    private final java.util.concurrent.LinkedBlockingQueue<IbvAsyncEvent> asyncEvents =
            new java.util.concurrent.LinkedBlockingQueue<>();
    /** Attached: the connection the vNIC writes this context's events to, once asked for. */
    private java.nio.channels.SocketChannel asyncStream;

    IbvContext(IbvDevice device, Context context, HostLoop loop) {
        this.device = device;
        this.context = context;
        this.loop = loop;
        this.attached = null;
        DeviceAttributes a = context.queryDevice();
        this.qpByIndex = new IbvQp[a.maxQp()];
        this.mrByIndex = new AtomicReferenceArray<>(a.maxMr());
    }

    /** A context on a vNIC process, over its own control connection. */
    IbvContext(IbvDevice device, AttachedContext attached) {
        this.device = device;
        this.context = null;
        this.loop = null;
        this.attached = attached;
        this.qpByIndex = null;
        this.mrByIndex = new AtomicReferenceArray<>(attached.attributes().maxMr());
    }

    /** The device this context was opened on. */
    public IbvDevice device() {
        return device;
    }

    /** Device attributes and limits ({@code ibv_query_device}). */
    public DeviceAttributes queryDevice() {
        return attached != null ? attached.attributes() : context.queryDevice();
    }

    /** Attributes of port {@code port} ({@code ibv_query_port}); the only port is 1. */
    public IbvPortAttr queryPort(int port) {
        if (port != 1) {
            throw new IbvInvalidArgumentException("port " + port + " does not exist (the device has port 1)");
        }
        DeviceAttributes a = queryDevice();
        boolean up = attached != null
                ? attached.portActive()
                : loop.call(() -> context.device().portActive());
        return new IbvPortAttr(
                up ? IbvPortAttr.State.ACTIVE : IbvPortAttr.State.DOWN, a.maxMtu(), a.maxMtu(), 1, 1, "Ethernet");
    }

    /** GID {@code index} of {@code port} ({@code ibv_query_gid}): index 0 is the ENI's RoCE v2 GID. */
    public IbvGid queryGid(int port, int index) {
        queryPort(port);
        if (index != 0) {
            throw new IbvInvalidArgumentException("GID index " + index + " (the port has one GID)");
        }
        return device.gid();
    }

    /**
     * Allocates {@code bytes} bytes of page-aligned native memory that live as long as {@code arena},
     * for registration with {@link IbvPd#regMr(MemorySegment, int)}. On an attached device it is a
     * sealed memfd shared with the vNIC process, which then maps the registered pages and reaches
     * them without a system call (zero-copy); any other native segment is reached with {@code
     * process_vm_readv/writev}. On an embedded host it is ordinary native memory of {@code arena}.
     *
     * @throws IbvInvalidArgumentException for a size that is not positive
     */
    public MemorySegment allocBuffer(long bytes, Arena arena) {
        if (bytes <= 0 || arena == null) {
            throw new IbvInvalidArgumentException("buffer of " + bytes + " bytes (and an arena) needed");
        }
        if (attached != null) {
            return attached.allocate(bytes, arena).segment();
        }
        return arena.allocate(bytes, 4096);
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    public IbvPd allocPd() {
        if (attached != null) {
            synchronized (this) {
                checkOpen();
                IbvPd p = new IbvPd(
                        this, attached.call(ControlProtocol.ALLOC_PD, null).getInt());
                pds.add(p);
                return p;
            }
        }
        return loop.call(() -> {
            checkOpen();
            ProtectionDomain pd = context.allocatePd();
            IbvPd p = new IbvPd(this, pd);
            pds.add(p);
            return p;
        });
    }

    /** Creates a completion event channel ({@code ibv_create_comp_channel}). */
    public IbvCompChannel createCompChannel() {
        if (attached != null) {
            synchronized (this) {
                checkOpen();
                IbvCompChannel ch = IbvCompChannel.attached(this);
                channels.add(ch);
                return ch;
            }
        }
        return loop.call(() -> {
            checkOpen();
            IbvCompChannel ch = new IbvCompChannel(this);
            channels.add(ch);
            return ch;
        });
    }

    /**
     * Creates a completion queue of {@code cqe} entries ({@code ibv_create_cq}).
     *
     * @param channel where events go after {@link IbvCq#reqNotify}, or null
     * @throws IbvInvalidArgumentException if {@code cqe} is outside {@code [1, max_cqe]} or the
     *     channel belongs to another context
     */
    public IbvCq createCq(int cqe, IbvCompChannel channel) {
        if (channel != null && channel.context() != this) {
            throw new IbvInvalidArgumentException("completion channel belongs to another context");
        }
        if (attached != null) {
            synchronized (this) {
                checkOpen();
                if (channel != null) {
                    channel.checkLive();
                }
                IbvCq c = AttachedCq.create(this, cqe, channel);
                if (channel != null) {
                    channel.cqs++;
                }
                cqs.add(c);
                return c;
            }
        }
        return loop.call(() -> {
            checkOpen();
            if (channel != null) {
                channel.checkLive();
            }
            CompletionChannel hook = context.createCompletionChannel();
            CompletionQueue cq;
            try {
                cq = context.createCompletionQueue(cqe, hook);
            } catch (RuntimeException e) {
                hook.destroy();
                throw e;
            }
            IbvCq c = new IbvCq(this, cq, hook, channel, cqe);
            if (channel != null) {
                channel.cqs++;
            }
            cqs.add(c);
            return c;
        });
    }

    /**
     * Creates a queue pair in RESET ({@code ibv_create_qp}); {@code attr} gets the sizes granted.
     *
     * @throws IbvInvalidArgumentException for sizes beyond the device's, missing CQs, objects of
     *     another context or protection domain
     * @throws IbvNoMemoryException when the device has no free queue pair
     */
    public IbvQp createQp(IbvPd pd, IbvQpInitAttr attr) {
        if (pd == null || attr == null || attr.sendCq == null || attr.recvCq == null || attr.qpType == null) {
            throw new IbvInvalidArgumentException("pd, qp_type, send_cq and recv_cq are required");
        }
        if (pd.context() != this || attr.sendCq.context() != this || attr.recvCq.context() != this) {
            throw new IbvInvalidArgumentException("protection domain or CQ belongs to another context");
        }
        if (attr.srq != null && attr.srq.pd() != pd) {
            throw new IbvInvalidArgumentException("shared receive queue belongs to another protection domain");
        }
        if (attached != null) {
            if (attr.qpType != QpType.RC && attr.qpType != QpType.UC && attr.qpType != QpType.UD) {
                throw new IbvNotSupportedException(attr.qpType + " queue pairs are not served");
            }
            synchronized (this) {
                checkOpen();
                pd.checkLive();
                if (attr.srq != null && !srqs.contains(attr.srq)) {
                    throw new IbvInvalidArgumentException("shared receive queue destroyed");
                }
                IbvQp q = AttachedQp.create(this, pd, attr);
                qps.add(q);
                return q;
            }
        }
        return loop.call(() -> {
            checkOpen();
            org.vrdma.vnic.verbs.QpInitAttr init = attr.toModel();
            QueuePair qp = context.createQueuePair(pd.model(), init);
            attr.grantedFrom(init.cap);
            IbvQp q = new IbvQp(this, pd, qp, attr);
            qpByIndex[qp.qpNum() - Device.FIRST_QPN] = q;
            qps.add(q);
            return q;
        });
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param srqLimit 0, or the level below which {@code SRQ_LIMIT_REACHED} is raised
     */
    public IbvSrq createSrq(IbvPd pd, int maxWr, int maxSge, int srqLimit) {
        if (pd == null || pd.context() != this) {
            throw new IbvInvalidArgumentException("protection domain missing or of another context");
        }
        if (attached != null) {
            synchronized (this) {
                checkOpen();
                pd.checkLive();
                int[] granted = new int[2];
                AttachedSrq a = AttachedSrq.create(this, pd, maxWr, maxSge, srqLimit, granted);
                IbvSrq s = new IbvSrq(this, pd, a, granted[0], granted[1]);
                srqs.add(s);
                return s;
            }
        }
        return loop.call(() -> {
            checkOpen();
            SharedReceiveQueue srq = context.createSharedReceiveQueue(pd.model(), maxWr, maxSge, srqLimit);
            IbvSrq s = new IbvSrq(this, pd, srq, maxWr, maxSge);
            srqs.add(s);
            return s;
        });
    }

    /** The address of a received UD datagram's sender ({@code ibv_init_ah_from_wc}): {@link IbvAhAttr#fromWc}. */
    public IbvAhAttr initAhFromWc(int portNum, IbvWc wc, MemorySegment grh) {
        return IbvAhAttr.fromWc(portNum, wc, grh);
    }

    /** Closes the context ({@code ibv_close_device}); EBUSY while any of its objects is alive. */
    @Override
    public void close() {
        if (attached != null) {
            synchronized (this) {
                if (!open) {
                    return;
                }
                int live = qps.size() + srqs.size() + cqs.size() + channels.size() + pds.size();
                if (live > 0) {
                    throw new IbvBusyException(live + " objects of the context are still alive");
                }
                open = false;
                attached.close();
                closeAsyncStream();
                return;
            }
        }
        loop.call(() -> {
            if (!open) {
                return null;
            }
            context.close();
            open = false;
            device.host().onContextClosed(this);
            return null;
        });
    }

    /**
     * The next asynchronous event ({@code ibv_get_async_event}): waits up to {@code timeout}, then
     * returns null. Acknowledge each event ({@link IbvAsyncEvent#ack()}). On an attached device the
     * first call opens the context's event connection to the vNIC, which has kept the events raised
     * before.
     */
    public IbvAsyncEvent getAsyncEvent(java.time.Duration timeout) {
        checkOpen();
        if (attached != null) {
            openAsyncStream();
        }
        try {
            return asyncEvents.poll(timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IbvIoException("interrupted while waiting for an asynchronous event");
        }
    }

    /** The next asynchronous event if one is queued, else null (a non-blocking {@code async_fd}). */
    public IbvAsyncEvent pollAsyncEvent() {
        return getAsyncEvent(java.time.Duration.ZERO);
    }

    /** On the loop (embedded): takes an event of the model if it concerns this context. */
    boolean onModelEvent(org.vrdma.vnic.verbs.AsyncEventType type, Object source) {
        IbvAsyncEvent e = null;
        switch (source) {
            case QueuePair q -> {
                IbvQp x = qp(q.qpNum());
                if (x != null && x.model() == q) {
                    e = IbvAsyncEvent.ofQp(type, x);
                }
            }
            case CompletionQueue q -> {
                for (IbvCq c : cqs) {
                    if (c.model() == q) {
                        e = IbvAsyncEvent.ofCq(type, c);
                    }
                }
            }
            case SharedReceiveQueue q -> {
                for (IbvSrq s : srqs) {
                    if (s.model() == q) {
                        e = IbvAsyncEvent.ofSrq(type, s);
                    }
                }
            }
            case Integer port -> {
                asyncEvents.add(IbvAsyncEvent.ofPort(type, port));
                return false; // every context sees its port change
            }
            default -> {
                asyncEvents.add(IbvAsyncEvent.ofDevice(type));
                return false;
            }
        }
        if (e == null) {
            return false;
        }
        asyncEvents.add(e);
        return true;
    }

    /** Attached: opens the event connection once and reads it on a daemon thread. */
    private synchronized void openAsyncStream() {
        if (asyncStream != null) {
            return;
        }
        asyncStream = attached.openAsync();
        java.nio.channels.SocketChannel ch = asyncStream;
        Thread.ofPlatform().daemon().name("vrdma-async-" + device.name()).start(() -> readAsync(ch));
    }

    private void readAsync(java.nio.channels.SocketChannel ch) {
        java.nio.ByteBuffer rec = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        try (ch) {
            while (true) {
                rec.clear();
                while (rec.hasRemaining()) {
                    if (ch.read(rec) < 0) {
                        return; // the vNIC or this context went away
                    }
                }
                rec.flip();
                org.vrdma.vnic.verbs.AsyncEventType type = IbvAsyncEvent.typeOf(rec.getInt());
                int kind = rec.getInt();
                int handle = rec.getInt();
                IbvAsyncEvent e = type == null ? null : attachedEvent(type, kind, handle);
                if (e != null) {
                    asyncEvents.add(e);
                }
            }
        } catch (java.io.IOException e) {
            // closed: no more events
        }
    }

    /** The event naming the attached object {@code handle} of {@code kind}; null if destroyed meanwhile. */
    private synchronized IbvAsyncEvent attachedEvent(org.vrdma.vnic.verbs.AsyncEventType type, int kind, int handle) {
        switch (kind) {
            case ControlProtocol.ASYNC_KIND_QP -> {
                for (IbvQp q : qps) {
                    if (q.attachedHandle() == handle) {
                        return IbvAsyncEvent.ofQp(type, q);
                    }
                }
                return null;
            }
            case ControlProtocol.ASYNC_KIND_CQ -> {
                for (IbvCq c : cqs) {
                    if (c.attached.handle == handle) {
                        return IbvAsyncEvent.ofCq(type, c);
                    }
                }
                return null;
            }
            case ControlProtocol.ASYNC_KIND_PORT -> {
                return IbvAsyncEvent.ofPort(type, handle);
            }
            case ControlProtocol.ASYNC_KIND_DEVICE -> {
                return IbvAsyncEvent.ofDevice(type);
            }
            case ControlProtocol.ASYNC_KIND_SRQ -> {
                for (IbvSrq s : srqs) {
                    if (s.attachedHandle() == handle) {
                        return IbvAsyncEvent.ofSrq(type, s);
                    }
                }
                return null;
            }
            default -> {
                return null;
            }
        }
    }

    /** The QP of number {@code qpNum} created in this context, or null; on the loop. */
    IbvQp qp(int qpNum) {
        int i = qpNum - Device.FIRST_QPN;
        return i >= 0 && i < qpByIndex.length ? qpByIndex[i] : null;
    }

    void onQpDestroyed(IbvQp q) {
        int i = q.qpNum() - Device.FIRST_QPN;
        if (qpByIndex[i] == q) {
            qpByIndex[i] = null;
        }
        qps.remove(q);
    }

    /** Destroys everything still open, children first; on the loop, when the host closes. */
    void forceClose() {
        for (IbvQp q : List.copyOf(qps)) {
            q.destroyOnLoop();
        }
        for (IbvSrq s : List.copyOf(srqs)) {
            s.destroyOnLoop();
        }
        for (IbvPd p : List.copyOf(pds)) {
            p.destroyChildrenOnLoop();
        }
        for (IbvCq c : List.copyOf(cqs)) {
            c.forceDestroyOnLoop();
        }
        for (IbvCompChannel ch : List.copyOf(channels)) {
            ch.destroyOnLoop();
        }
        for (IbvPd p : List.copyOf(pds)) {
            p.destroyOnLoop();
        }
        if (open) {
            context.close();
            open = false;
        }
        device.host().onContextClosed(this);
    }

    /**
     * Removes {@code o} from the objects an attached context tracks, after the vNIC destroyed it.
     */
    synchronized void forget(Object o) {
        qps.remove(o);
        srqs.remove(o);
        cqs.remove(o);
        channels.remove(o);
        pds.remove(o);
    }

    private synchronized void closeAsyncStream() {
        if (asyncStream != null) {
            try {
                asyncStream.close();
            } catch (java.io.IOException e) {
                // closing anyway
            }
        }
    }

    void checkOpen() {
        if (!open) {
            throw new IbvInvalidArgumentException("context closed");
        }
    }

    @Override
    public String toString() {
        return "IbvContext{" + device.name() + '}';
    }
}
