package org.vrdma.verbs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.vrdma.vnic.verbs.AtomicCap;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.QpAttr;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.SendWorkRequest;
import org.vrdma.vnic.verbs.VerbsException;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * A queue pair ({@code struct ibv_qp}), RC, UC or UD.
 *
 * <p><b>State</b>: {@link #modify} accepts exactly the transitions and attribute masks of the
 * InfiniBand specification (RESET → INIT → RTR → RTS, RTS ↔ SQD, anything → RESET or ERR); anything
 * else is EINVAL and leaves the QP unchanged. Entering ERR completes every outstanding request with
 * WR_FLUSH_ERR; entering RESET drops them without completions.
 *
 * <p><b>Posting</b> never waits for the device: {@link #postSend} and {@link #postRecv} check the
 * request (EINVAL for a bad opcode, size, state or handle; ENOMEM when the queue is full), copy it
 * into a ring the device's event loop drains, and wake the loop; a message that arrives before that
 * drain and finds the receive queue empty drains the ring itself, so a receive posted before the
 * peer sends is always found. Problems the device finds in the
 * memory itself (a bad lkey, an address outside the region, missing access rights) are not errors
 * of the call but error completions (LOC_PROT_ERR), as with hardware. A send queue slot is free
 * again once a completion for that request, or for a later one, has been produced: post with
 * {@link SendFlags#SIGNALED} at least once per {@code maxSendWr} requests (or create the QP with
 * {@code sqSigAll}). One thread at a time posts to a queue.
 *
 * <p>On an attached device (RC, UC and UD, with or without a shared receive queue) posting writes
 * the QP's work-queue ring shared with the vNIC process and rings its doorbell only when the vNIC
 * sleeps; a ring slot is free again once the vNIC has taken the request into its queue. The checks
 * above are the same in both modes, so a request refused by one is refused by the other.
 */
public final class IbvQp implements AutoCloseable {
    private final IbvContext context;
    private final IbvPd pd;
    private final QueuePair qp;
    private final int qpNum;
    private final QpType type;
    private final IbvCq sendCq;
    private final IbvCq recvCq;
    private final IbvSrq srq;
    private final int maxSendWr;
    private final int maxSendSge;
    private final int maxRecvWr;
    private final int maxRecvSge;
    private final int maxInline;
    private final boolean atomics;

    // Mirrors the posting threads read; written on the loop after every modify.
    private volatile QpState state = QpState.RESET;
    private volatile int pathMtuBytes;
    private volatile boolean live = true;

    // Send submissions: written by the posting thread, drained on the loop.
    private final SendSlot[] sendSlots;
    private final AtomicLong sendTail = new AtomicLong();
    private final AtomicLong sendRetired = new AtomicLong();
    private final AtomicBoolean sendScheduled = new AtomicBoolean();
    private final Runnable sendDrain = this::drainSends;
    private final RecvRing recvRing;
    private final Runnable recvDrain = this::drainRecvs;
    private final Consumer<RecvWorkRequest> recvSink = this::postRecvToModel;

    // Confined to the loop.
    private long loopSendHead;
    private final long[] sendWrIds;
    private final SendWorkRequest modelWr;
    private long refusedPosts;
    /** The rings of a QP in a vNIC process, or null on an embedded host. */
    private final AttachedQp attached;
    /** Asynchronous events taken but not acknowledged: destroying is EBUSY until they are. */
    final java.util.concurrent.atomic.AtomicInteger unackedAsyncEvents =
            new java.util.concurrent.atomic.AtomicInteger();

    /** A QP of an attached context, in RESET. */
    IbvQp(IbvContext context, IbvPd pd, int qpNum, IbvQpInitAttr granted, AttachedQp attached) {
        this.context = context;
        this.pd = pd;
        this.qp = null;
        this.qpNum = qpNum;
        this.type = granted.qpType;
        this.sendCq = granted.sendCq;
        this.recvCq = granted.recvCq;
        this.srq = granted.srq;
        this.maxSendWr = granted.maxSendWr;
        this.maxSendSge = granted.maxSendSge;
        this.maxRecvWr = granted.maxRecvWr;
        this.maxRecvSge = granted.maxRecvSge;
        this.maxInline = granted.maxInlineData;
        this.atomics = context.queryDevice().atomicCap() != AtomicCap.NONE;
        this.sendSlots = new SendSlot[0];
        this.sendWrIds = new long[0];
        this.modelWr = null;
        this.recvRing = null;
        this.attached = attached;
        if (type == QpType.UD) {
            // A UD QP's path MTU is the port's, fixed at creation: the mirror the size check reads.
            this.pathMtuBytes = attached.query(context).pathMtu.bytes();
        }
    }

    IbvQp(IbvContext context, IbvPd pd, QueuePair qp, IbvQpInitAttr granted) {
        this.context = context;
        this.pd = pd;
        this.qp = qp;
        this.qpNum = qp.qpNum();
        this.type = qp.type();
        this.sendCq = granted.sendCq;
        this.recvCq = granted.recvCq;
        this.srq = granted.srq;
        this.maxSendWr = granted.maxSendWr;
        this.maxSendSge = granted.maxSendSge;
        this.maxRecvWr = granted.maxRecvWr;
        this.maxRecvSge = granted.maxRecvSge;
        this.maxInline = granted.maxInlineData;
        this.atomics = context.queryDevice().atomicCap() != AtomicCap.NONE;
        this.sendSlots = new SendSlot[maxSendWr];
        for (int i = 0; i < maxSendWr; i++) {
            sendSlots[i] = new SendSlot(maxSendSge, maxInline);
        }
        this.sendWrIds = new long[maxSendWr];
        this.modelWr = new SendWorkRequest(maxSendSge);
        this.recvRing = srq == null ? new RecvRing(maxRecvWr, maxRecvSge) : null;
        this.attached = null;
        if (recvRing != null) {
            // The loop handles a message before queued tasks: one finding the queue empty takes the
            // receives already posted instead of waiting for their drain (UD would drop it).
            qp.receiveRefill(recvDrain);
        }
        refreshMirrors();
    }

    /** The QP number. */
    public int qpNum() {
        return qpNum;
    }

    /** RC or UD. */
    public QpType type() {
        return type;
    }

    /** The protection domain. */
    public IbvPd pd() {
        return pd;
    }

    /** The context. */
    public IbvContext context() {
        return context;
    }

    /** The shared receive queue, or null. */
    public IbvSrq srq() {
        return srq;
    }

    /** The state as of the last {@link #modify} (the device may since have moved it to ERR). */
    public QpState state() {
        return state;
    }

    /**
     * Modifies the QP ({@code ibv_modify_qp}) with the fields of {@code attr} named by {@code mask}
     * ({@link QpAttrMask} bits).
     *
     * @throws IbvInvalidArgumentException for a transition or mask the specification does not allow,
     *     or a value outside the device's limits
     */
    public void modify(IbvQpAttr attr, int mask) {
        checkLive();
        QpAttr m = attr.toModel(mask);
        if (attached != null) {
            synchronized (this) {
                checkLive();
                attached.modify(context, attr, m, mask);
                if ((mask & QpAttrMask.STATE) != 0) {
                    state = m.qpState;
                }
                if ((mask & QpAttrMask.PATH_MTU) != 0) {
                    pathMtuBytes = m.pathMtu.bytes();
                }
            }
            return;
        }
        context.loop.call(() -> {
            checkLive();
            // Posts made before this call reach the device before the state changes.
            drainSends();
            drainRecvs();
            qp.modify(m, mask);
            if (qp.state() == QpState.RESET) {
                sendRetired.set(sendTail.get());
                if (recvRing != null) {
                    recvRing.retireAll();
                }
            }
            refreshMirrors();
            return null;
        });
    }

    /** Current attributes ({@code ibv_query_qp}), including the state the device is in now. */
    public IbvQpAttr query() {
        checkLive();
        if (attached != null) {
            IbvQpAttr a = attached.query(context);
            state = a.qpState;
            return a;
        }
        return context.loop.call(() -> IbvQpAttr.fromModel(qp.query()));
    }

    /**
     * Posts a send work request ({@code ibv_post_send}) without waiting for the device.
     *
     * @throws IbvInvalidArgumentException wrong state (RESET, INIT, RTR), an opcode the QP type does
     *     not allow, too many elements, inline data beyond {@code maxInlineData} or outside a
     *     registered region, an atomic without exactly one 8-byte element, a UD request without a
     *     live address handle of the QP's domain or longer than the path MTU
     * @throws IbvNoMemoryException the send queue is full
     * @throws IbvNotSupportedException atomics on a device without them
     */
    public void postSend(IbvSendWr wr) {
        checkLive();
        QpState s = state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
            throw new IbvInvalidArgumentException("cannot post sends in state " + s);
        }
        long total = validate(wr);
        if (attached != null) {
            attached.postSend(context, wr, total);
            onPosted(wr);
            return;
        }
        long t = sendTail.getPlain();
        if (t - sendRetired.get() >= maxSendWr) {
            throw new IbvNoMemoryException(Errno.ENOMEM, "send queue full (" + maxSendWr + ")");
        }
        sendSlots[(int) (t % maxSendWr)].fill(wr, total, context);
        onPosted(wr);
        // A volatile store, ordered before the read of the scheduled flag in wake().
        sendTail.set(t + 1);
        if (context.loop.inLoop()) {
            drainSends();
        } else if (!sendScheduled.get() && sendScheduled.compareAndSet(false, true)) {
            context.loop.execute(sendDrain);
        }
    }

    /** A type 2 window's bind was posted: the window reports the rkey it asked for. */
    private static void onPosted(IbvSendWr wr) {
        if (wr.opcode == WrOpcode.BIND_MW && !wr.type1Bind) {
            wr.mw.rkey(wr.rkey);
        }
    }

    /**
     * Binds a type 1 memory window ({@code ibv_bind_mw}) to {@code [addr, addr + length)} of {@code
     * mr} with {@code access} (REMOTE_* flags): the bind goes on the send queue, executes in order
     * and completes as {@link WcOpcode#BIND_MW} when signaled, or MW_BIND_ERR when the region does
     * not allow it (no {@code MW_BIND}, out of range, remote write without local write); the window
     * gets a new rkey at once, as {@code mw->rkey} does. A null region with length 0 unbinds it.
     *
     * @return the window's new rkey
     * @throws IbvInvalidArgumentException a type 2 window, a window or region of another domain, a UD
     *     QP, the state
     * @throws IbvNoMemoryException the send queue is full
     */
    public int bindMw(IbvMw mw, long wrId, int sendFlags, IbvMr mr, long addr, long length, int access) {
        if (mw == null || mw.type() != IbvMw.TYPE_1) {
            throw new IbvInvalidArgumentException("ibv_bind_mw binds type 1 windows");
        }
        if (mw.pd() != pd || (mr != null && mr.pd() != pd)) {
            throw new IbvInvalidArgumentException("window or region of another protection domain");
        }
        IbvSendWr wr = new IbvSendWr(1);
        wr.wrId = wrId;
        wr.opcode = WrOpcode.BIND_MW;
        wr.sendFlags = sendFlags & (SendFlags.SIGNALED | SendFlags.FENCE);
        wr.mw = mw;
        wr.rkey = mw.nextRkey();
        wr.bindMr = mr;
        wr.bindAddr = addr;
        wr.bindLength = length;
        wr.bindAccess = access;
        wr.type1Bind = true;
        postSend(wr);
        mw.rkey(wr.rkey);
        return wr.rkey;
    }

    /**
     * Posts a receive ({@code ibv_post_recv}) without waiting for the device.
     *
     * @throws IbvInvalidArgumentException RESET, an SRQ attached, too many elements, a negative length
     * @throws IbvNoMemoryException the receive queue is full
     */
    public void postRecv(IbvRecvWr wr) {
        checkLive();
        if (wr == null) {
            throw new IbvInvalidArgumentException("work request missing");
        }
        if (srq != null) {
            throw new IbvInvalidArgumentException("the QP uses a shared receive queue");
        }
        if (state == QpState.RESET) {
            throw new IbvInvalidArgumentException("cannot post receives in RESET");
        }
        if (attached != null) {
            RecvRing.check(wr, maxRecvSge);
            attached.postRecv(context, wr);
            return;
        }
        if (!recvRing.offer(wr, maxRecvSge)) {
            throw new IbvNoMemoryException(Errno.ENOMEM, "receive queue full (" + maxRecvWr + ")");
        }
        if (context.loop.inLoop()) {
            drainRecvs();
        } else if (!recvRing.scheduled.get() && recvRing.scheduled.compareAndSet(false, true)) {
            context.loop.execute(recvDrain);
        }
    }

    /** Send requests posted whose completion (or a later one's) has not been produced yet. */
    public long outstandingSends() {
        if (attached != null) {
            return attached.pendingSends();
        }
        return sendTail.get() - sendRetired.get();
    }

    /** Requests the device refused after they were posted (races with modify or destroy). */
    public long refusedPosts() {
        if (attached != null) {
            return 0; // the vNIC process completes what it refuses with LOC_QP_OP_ERR itself
        }
        return context.loop.call(() -> refusedPosts);
    }

    /** Destroys the QP ({@code ibv_destroy_qp}); outstanding requests vanish without completions. */
    public void destroy() {
        checkLive();
        checkNoUnackedAsyncEvents(unackedAsyncEvents);
        if (attached != null) {
            destroyAttached();
            return;
        }
        context.loop.run(() -> {
            checkLive();
            destroyOnLoop();
        });
    }

    /** Destroys the QP unless that was already done. */
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

    /** The vNIC's handle of an attached QP (-1 for an embedded one). */
    int attachedHandle() {
        return attached != null ? attached.handle : -1;
    }

    QueuePair model() {
        return qp;
    }

    /** EBUSY while an object's asynchronous events are unacknowledged, as {@code ibv_destroy_*} waits. */
    static void checkNoUnackedAsyncEvents(java.util.concurrent.atomic.AtomicInteger unacked) {
        int n = unacked.get();
        if (n != 0) {
            throw new IbvBusyException(n + " asynchronous events not acknowledged");
        }
    }

    private void destroyAttached() {
        synchronized (context) {
            checkLive();
            attached.destroy(context);
            live = false;
            context.forget(this);
        }
    }

    @Override
    public String toString() {
        return "IbvQp{qpn=" + qpNum + ", " + type + ", " + state + '}';
    }

    // ---------------------------------------------------------------- posting thread

    private long validate(IbvSendWr wr) {
        if (wr == null || wr.opcode == null) {
            throw new IbvInvalidArgumentException("work request or opcode missing");
        }
        WrOpcode op = wr.opcode;
        if (type == QpType.UD && op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
            throw new IbvInvalidArgumentException(op + " is not valid on a UD queue pair");
        }
        if (type == QpType.UC && (op.isReadOrAtomic() || op == WrOpcode.SEND_WITH_INV)) {
            throw new IbvInvalidArgumentException(
                    op + " is not valid on a UC queue pair (SEND, RDMA WRITE and window operations only)");
        }
        if (op.isLocal() && (wr.numSge() != 0 || (wr.sendFlags & SendFlags.INLINE) != 0)) {
            throw new IbvInvalidArgumentException(op + " carries no data");
        }
        if (op == WrOpcode.BIND_MW) {
            IbvMw mw = wr.mw;
            if (mw == null || !mw.isAllocated() || mw.pd().context() != context) {
                throw new IbvInvalidArgumentException("BIND_MW needs a live memory window of this context");
            }
            if (mw.type() != (wr.type1Bind ? IbvMw.TYPE_1 : IbvMw.TYPE_2)) {
                throw new IbvInvalidArgumentException("type 1 windows are bound with bindMw, type 2 with BIND_MW");
            }
            if (wr.bindMr == null ? wr.bindLength != 0 : wr.bindMr.pd().context() != context) {
                throw new IbvInvalidArgumentException("BIND_MW needs a region of this context");
            }
            if (wr.bindLength < 0) {
                throw new IbvInvalidArgumentException("negative window length");
            }
        }
        if (wr.numSge() > maxSendSge) {
            throw new IbvInvalidArgumentException("num_sge " + wr.numSge() + " > max_send_sge " + maxSendSge);
        }
        long total = 0;
        for (int i = 0; i < wr.numSge(); i++) {
            if (wr.sgeLength(i) < 0) {
                throw new IbvInvalidArgumentException("negative sge length");
            }
            total += wr.sgeLength(i);
        }
        if (total > Integer.MAX_VALUE) {
            throw new IbvInvalidArgumentException("message longer than 2^31 - 1 bytes");
        }
        if ((wr.sendFlags & SendFlags.INLINE) != 0) {
            if (!op.carriesPayload()) {
                throw new IbvInvalidArgumentException("INLINE is only valid for SEND and RDMA WRITE");
            }
            if (total > maxInline) {
                throw new IbvInvalidArgumentException("inline data " + total + " > max_inline_data " + maxInline);
            }
        }
        if (op.isAtomic()) {
            if (!atomics) {
                throw new IbvNotSupportedException("the device has no atomics");
            }
            if (wr.numSge() != 1 || wr.sgeLength(0) != 8) {
                throw new IbvInvalidArgumentException("atomics need exactly one 8-byte sge");
            }
        }
        if (type == QpType.UD) {
            IbvAh ah = wr.ah;
            if (ah == null || !ah.live || ah.pd() != pd) {
                throw new IbvInvalidArgumentException("UD send needs a live address handle of the QP's domain");
            }
            if (total > pathMtuBytes) {
                throw new IbvInvalidArgumentException("UD message of " + total + " bytes exceeds the MTU");
            }
        }
        return total;
    }

    // ---------------------------------------------------------------- loop

    private void drainSends() {
        sendScheduled.set(false);
        long t = sendTail.get();
        while (loopSendHead < t) {
            long seq = loopSendHead++;
            int i = (int) (seq % maxSendWr);
            SendSlot slot = sendSlots[i];
            sendWrIds[i] = slot.wrId;
            if (!live) {
                continue;
            }
            slot.toModel(modelWr, seq);
            try {
                if (slot.opcode == WrOpcode.BIND_MW && slot.mw.type() == IbvMw.TYPE_1) {
                    qp.bindMw(
                            modelWr.mw,
                            modelWr.rkey,
                            seq,
                            modelWr.sendFlags,
                            modelWr.bindMr,
                            modelWr.bindAddr,
                            modelWr.bindLength,
                            modelWr.bindAccess);
                } else {
                    qp.postSend(modelWr);
                }
            } catch (VerbsException e) {
                refuse(seq, slot.opcode);
            }
        }
    }

    /**
     * A send the device refused after it was posted (a concurrent modify to RESET or INIT, say):
     * the QP goes to ERR, which flushes the requests before it in order, and the request itself
     * completes with LOC_QP_OP_ERR, so every posted request still gets its completion.
     */
    private void refuse(long seq, WrOpcode opcode) {
        refusedPosts++;
        if (qp.state() != QpState.ERR && qp.state() != QpState.RESET) {
            QpAttr err = new QpAttr();
            err.qpState = QpState.ERR;
            qp.modify(err, QpAttrMask.STATE);
            refreshMirrors();
        }
        sendCq.produceLocal(
                sendWrIds[(int) (seq % maxSendWr)], WcStatus.LOC_QP_OP_ERR, opcode.completionOpcode(), qpNum);
        sendRetired.set(seq + 1);
    }

    private void drainRecvs() {
        if (recvRing != null) {
            recvRing.drain(recvSink);
        }
    }

    private void postRecvToModel(RecvWorkRequest wr) {
        if (!live) {
            return;
        }
        try {
            qp.postRecv(wr);
        } catch (VerbsException e) {
            refusedPosts++;
            recvCq.produceLocal(wr.wrId, WcStatus.LOC_QP_OP_ERR, WcOpcode.RECV, qpNum);
            recvRing.retireOne();
        }
    }

    /** A completion of this QP leaves the vNIC: frees its queue slot, returns the application's id. */
    long onCompletion(WorkCompletion wc) {
        if (wc.opcode == WcOpcode.RECV || wc.opcode == WcOpcode.RECV_RDMA_WITH_IMM) {
            if (srq != null) {
                srq.ring.retireOne();
            } else {
                recvRing.retireOne();
            }
            return wc.wrId;
        }
        // Send completions come in posting order; the id is the request's sequence number.
        long seq = wc.wrId;
        sendRetired.set(seq + 1);
        return sendWrIds[(int) (seq % maxSendWr)];
    }

    void destroyOnLoop() {
        qp.destroy();
        live = false;
        context.onQpDestroyed(this);
    }

    private void refreshMirrors() {
        QpAttr a = qp.query();
        pathMtuBytes = a.pathMtu.bytes();
        state = a.qpState;
    }

    private void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("queue pair destroyed");
        }
    }

    /** A copy of one posted send request, inline bytes included. */
    private static final class SendSlot {
        long wrId;
        WrOpcode opcode;
        int sendFlags;
        int immData;
        long remoteAddr;
        int rkey;
        long compareAdd;
        long swap;
        IbvAh ah;
        int remoteQpn;
        int remoteQkey;
        int invalidateRkey;
        IbvMw mw;
        IbvMr bindMr;
        long bindAddr;
        long bindLength;
        int bindAccess;
        final long[] addr;
        final int[] length;
        final int[] lkey;
        int numSge;
        final byte[] inline;
        final ByteBuf inlineBuf;
        int inlineLength;

        SendSlot(int maxSge, int maxInline) {
            addr = new long[maxSge];
            length = new int[maxSge];
            lkey = new int[maxSge];
            inline = new byte[maxInline];
            inlineBuf = Unpooled.wrappedBuffer(inline);
        }

        void fill(IbvSendWr wr, long total, IbvContext context) {
            wrId = wr.wrId;
            opcode = wr.opcode;
            sendFlags = wr.sendFlags;
            immData = wr.immData;
            remoteAddr = wr.remoteAddr;
            rkey = wr.rkey;
            compareAdd = wr.compareAdd;
            swap = wr.swap;
            ah = wr.ah;
            remoteQpn = wr.remoteQpn;
            remoteQkey = wr.remoteQkey;
            invalidateRkey = wr.invalidateRkey;
            mw = wr.mw;
            bindMr = wr.bindMr;
            bindAddr = wr.bindAddr;
            bindLength = wr.bindLength;
            bindAccess = wr.bindAccess;
            if ((sendFlags & SendFlags.INLINE) != 0) {
                numSge = 0;
                int pos = 0;
                for (int i = 0; i < wr.numSge(); i++) {
                    int len = wr.sgeLength(i);
                    IbvMr mr = context.mrByIndex.get(wr.sgeLkey(i) >>> 8);
                    if (mr == null || mr.lkey() != wr.sgeLkey(i) || !mr.contains(wr.sgeAddr(i), len)) {
                        throw new IbvInvalidArgumentException("inline sge " + i + " is not inside a registered region");
                    }
                    MemorySegment src = mr.segment();
                    try {
                        MemorySegment.copy(src, ValueLayout.JAVA_BYTE, wr.sgeAddr(i) - mr.addr(), inline, pos, len);
                    } catch (IllegalStateException e) {
                        throw new IbvFaultException("inline source no longer accessible: " + e.getMessage());
                    }
                    pos += len;
                }
                inlineLength = (int) total;
            } else {
                numSge = wr.numSge();
                for (int i = 0; i < numSge; i++) {
                    addr[i] = wr.sgeAddr(i);
                    length[i] = wr.sgeLength(i);
                    lkey[i] = wr.sgeLkey(i);
                }
            }
        }

        void toModel(SendWorkRequest m, long seq) {
            m.reset();
            m.wrId = seq;
            m.opcode = opcode;
            m.sendFlags = sendFlags;
            m.immData = immData;
            m.remoteAddr = remoteAddr;
            m.rkey = rkey;
            m.compareAdd = compareAdd;
            m.swap = swap;
            m.ah = ah == null ? null : ah.ah;
            m.remoteQpn = remoteQpn;
            m.remoteQkey = remoteQkey;
            m.invalidateRkey = invalidateRkey;
            if (opcode == WrOpcode.BIND_MW) {
                m.mw = mw.mw;
                m.bindMr = bindMr == null ? null : bindMr.model();
                m.bindAddr = bindAddr;
                m.bindLength = bindLength;
                m.bindAccess = bindAccess;
            }
            if ((sendFlags & SendFlags.INLINE) != 0) {
                inlineBuf.setIndex(0, inlineLength);
                m.inlineData = inlineBuf;
            } else {
                for (int i = 0; i < numSge; i++) {
                    m.addSge(addr[i], length[i], lkey[i]);
                }
            }
        }
    }
}
