package org.vrdma.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.SharedReceiveQueue;

/**
 * An open device context ({@code struct ibv_context}): queries, and the parent of protection
 * domains, completion channels, completion queues, queue pairs and shared receive queues.
 *
 * <p>Control calls (everything but posting and polling) are thread-safe: they run on the device's
 * event loop and the caller waits. {@link #close()} fails with EBUSY while objects of the context
 * are alive, as {@code ibv_close_device} does.
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

    private boolean open = true;

    IbvContext(IbvDevice device, Context context, HostLoop loop) {
        this.device = device;
        this.context = context;
        this.loop = loop;
        DeviceAttributes a = context.queryDevice();
        this.qpByIndex = new IbvQp[a.maxQp()];
        this.mrByIndex = new AtomicReferenceArray<>(a.maxMr());
    }

    /** The device this context was opened on. */
    public IbvDevice device() {
        return device;
    }

    /** Device attributes and limits ({@code ibv_query_device}). */
    public DeviceAttributes queryDevice() {
        return context.queryDevice();
    }

    /** Attributes of port {@code port} ({@code ibv_query_port}); the only port is 1. */
    public IbvPortAttr queryPort(int port) {
        if (port != 1) {
            throw new IbvInvalidArgumentException("port " + port + " does not exist (the device has port 1)");
        }
        DeviceAttributes a = context.queryDevice();
        return new IbvPortAttr(IbvPortAttr.State.ACTIVE, a.maxMtu(), a.maxMtu(), 1, 1, "Ethernet");
    }

    /** GID {@code index} of {@code port} ({@code ibv_query_gid}): index 0 is the ENI's RoCE v2 GID. */
    public IbvGid queryGid(int port, int index) {
        queryPort(port);
        if (index != 0) {
            throw new IbvInvalidArgumentException("GID index " + index + " (the port has one GID)");
        }
        return device.gid();
    }

    /** Allocates a protection domain ({@code ibv_alloc_pd}). */
    public IbvPd allocPd() {
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
        return loop.call(() -> {
            checkOpen();
            SharedReceiveQueue srq = context.createSharedReceiveQueue(pd.model(), maxWr, maxSge, srqLimit);
            IbvSrq s = new IbvSrq(this, pd, srq, maxWr, maxSge);
            srqs.add(s);
            return s;
        });
    }

    /** Closes the context ({@code ibv_close_device}); EBUSY while any of its objects is alive. */
    @Override
    public void close() {
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
