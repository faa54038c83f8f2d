package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import java.util.Objects;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.Psn;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;
import org.vrdma.vnic.transport.TxWindow;

/**
 * A queue pair ({@code struct ibv_qp}) of type RC, UC or UD: the verbs-facing state machine and
 * work queues, with the transport engines ({@link RcRequester}, {@link RcResponder}, {@link
 * UcEngine}) behind it.
 *
 * <p>State machine: {@link #modify} accepts exactly the transitions and attribute masks of the IB
 * spec (RESET→INIT→RTR→RTS, RTS↔SQD, SQE→RTS for UD and UC, anything→RESET/ERR); anything else fails with
 * EINVAL and leaves the QP unchanged. Entering ERR completes every outstanding work request with
 * WR_FLUSH_ERR; entering RESET discards them silently.
 *
 * <p>Posting: {@link #postSend} needs RTS or SQD (in SQD requests wait), {@link #postRecv} any state
 * but RESET. In ERR both accept the request and flush it at once, as hardware does. A full queue is
 * ENOMEM, a malformed request EINVAL; local protection problems surface as error completions.
 */
public final class QueuePair implements TimerHandler {
    private static final int GRH_BYTES = 40;

    private final Device device;
    private final Context context;
    private final ProtectionDomain pd;
    private final QpType type;
    private final int qpNum;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final SharedReceiveQueue srq;
    private final ReceiveQueue rq;
    private final SendQueue sq;
    private final QpCap cap;
    private final boolean sqSigAll;
    private final RecoveryMode recoveryMode;
    private final TransportCounters counters = new TransportCounters();
    private final TxWindow window;
    private final RcRequester requester;
    private final RcResponder responder;
    /** Both halves of a UC QP (null for RC and UD). */
    private final UcEngine uc;
    /** The receive an RC or UC responder is filling (null for UD). */
    private final ReceivePlacement connectedRecv;
    /** {@link #bindMw} is posting: its BIND_MW request names a type 1 window. */
    private boolean bindingType1;
    /** COMM_EST was raised since the QP last entered RTR. */
    private boolean commEstablished;

    private final QpAttr attr = new QpAttr();
    private final int udpSrcPort;
    private long lastCnpNs = Long.MIN_VALUE;
    private boolean live = true;
    /** Asked for more receives when a packet finds the queue empty (null: none). */
    private Runnable receiveRefill;

    private QueuePair(
            final Context context,
            final ProtectionDomain pd,
            final QpInitAttr init,
            final QpCap cap,
            final RateWindowSource source) {
        this.device = context.device();
        this.context = context;
        this.pd = pd;
        this.type = init.qpType;
        this.sendCq = init.sendCq;
        this.recvCq = init.recvCq;
        this.srq = init.srq;
        this.cap = cap;
        this.sqSigAll = init.sqSigAll;
        this.recoveryMode = init.recoveryMode;
        this.sq = new SendQueue(cap.maxSendWr, cap.maxSendSge, cap.maxInlineData);
        this.rq = srq == null ? new ReceiveQueue(cap.maxRecvWr, cap.maxRecvSge) : null;
        this.window = new TxWindow(source);
        this.qpNum = device.allocateQpn(this);
        this.udpSrcPort = 0xC000 | ((qpNum * 0x9E37) & 0x3FFF);
        this.attr.cap = cap;
        if (type == QpType.UD) {
            this.attr.pathMtu = device.attributes().maxMtu(); // UD messages are bounded by the port's MTU
        }
        final int maxRecvSge = srq != null ? srq.queue().maxSge() : cap.maxRecvSge;
        this.connectedRecv = type == QpType.UD ? null : new ReceivePlacement(this, maxRecvSge, type == QpType.RC);
        if (type == QpType.RC) {
            this.requester = new RcRequester(this, sq, window, recoveryMode);
            this.responder = new RcResponder(this, connectedRecv, recoveryMode);
        } else {
            this.requester = null;
            this.responder = null;
        }
        this.uc = type == QpType.UC ? new UcEngine(this, connectedRecv) : null;
    }

    static QueuePair create(final Context context, final ProtectionDomain pd, final QpInitAttr init) {
        Objects.requireNonNull(init, "init");
        pd.checkAllocated();
        final DeviceAttributes a = context.device().attributes();
        if (init.qpType == null || init.sendCq == null || init.recvCq == null || init.cap == null) {
            throw new VerbsException(Errno.EINVAL, "qp_type, send_cq, recv_cq and cap are required");
        }
        final QpCap c = init.cap;
        if (c.maxSendWr < 1
                || c.maxSendWr > a.maxQpWr()
                || c.maxSendSge < 1
                || c.maxSendSge > a.maxSge()
                || c.maxInlineData < 0
                || c.maxInlineData > a.maxInlineData()) {
            throw new VerbsException(Errno.EINVAL, "send queue capabilities exceed the device's");
        }
        if (init.srq == null
                && (c.maxRecvWr < 1 || c.maxRecvWr > a.maxQpWr() || c.maxRecvSge < 1 || c.maxRecvSge > a.maxSge())) {
            throw new VerbsException(Errno.EINVAL, "receive queue capabilities exceed the device's");
        }
        if (init.srq != null && init.srq.pd() != pd) {
            throw new VerbsException(Errno.EINVAL, "shared receive queue belongs to another protection domain");
        }
        final Device device = context.device();
        device.reserve(Device.Resource.QP);
        final QpCap granted = c.copy();
        if (init.srq != null) {
            granted.maxRecvWr = 0;
            granted.maxRecvSge = 0;
        }
        final TransportConfig cfg = device.config();
        final QueuePair qp;
        try {
            final RateWindowSource source = init.qpType == QpType.RC
                    ? cfg.rateWindowFactory().create(0, cfg.lineRateBps(), cfg.baseRttNs(), cfg.effectiveWindowBytes())
                    : new org.vrdma.vnic.transport.StaticRateWindow(
                            RateWindowSource.UNLIMITED_RATE, RateWindowSource.UNLIMITED_WINDOW);
            qp = new QueuePair(context, pd, init, granted, source);
        } catch (final RuntimeException e) {
            device.release(Device.Resource.QP);
            throw e;
        }
        init.sendCq.attachUser();
        init.recvCq.attachUser();
        if (init.srq != null) {
            init.srq.attach();
        }
        pd.onChildCreated();
        init.cap = granted.copy();
        return qp;
    }

    // ---------------------------------------------------------------- verbs

    public int qpNum() {
        return qpNum;
    }

    public QpType type() {
        return type;
    }

    public QpState state() {
        return attr.qpState;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public RecoveryMode recoveryMode() {
        return recoveryMode;
    }

    /** The TX window (and through it the rate/window source) of this QP. */
    public TxWindow window() {
        return window;
    }

    /** Current attributes ({@code ibv_query_qp}); a copy. */
    public QpAttr query() {
        final QpAttr c = attr.copy();
        c.curQpState = attr.qpState;
        c.sqDraining = attr.qpState == QpState.SQD && requester != null && !requester.isDrained();
        return c;
    }

    /** A snapshot of this QP's counters. */
    public TransportCounters counters() {
        return counters.snapshot();
    }

    /**
     * Modifies the QP ({@code ibv_modify_qp}): validates the transition and mask against the IB
     * table and the values against the device, then applies all or nothing.
     *
     * @throws VerbsException EINVAL for an invalid transition, mask or value
     */
    public void modify(final QpAttr a, final int mask) {
        checkLive();
        final QpState cur = attr.qpState;
        if ((mask & QpAttrMask.CUR_STATE) != 0 && a.curQpState != cur) {
            throw new VerbsException(Errno.EINVAL, "cur_qp_state " + a.curQpState + " but QP is " + cur);
        }
        final QpState next = (mask & QpAttrMask.STATE) != 0 ? a.qpState : cur;
        if (next == null) {
            throw new VerbsException(Errno.EINVAL, "qp_state missing");
        }
        final String why = QpTransitions.check(type, cur, next, mask);
        if (why != null) {
            throw new VerbsException(Errno.EINVAL, why);
        }
        validateValues(a, mask);
        applyValues(a, mask);
        if (next != cur || next == QpState.RESET) {
            enter(cur, next);
        } else if (requester != null && (next == QpState.RTS || next == QpState.SQD)) {
            requester.updateAttributes(attr);
        }
    }

    /**
     * Posts a send work request ({@code ibv_post_send}). Packets leave before this returns as far as
     * the window allows.
     *
     * @throws VerbsException EINVAL (state, opcode, sizes), ENOMEM (queue full)
     */
    public void postSend(final SendWorkRequest wr) {
        checkLive();
        final QpState s = attr.qpState;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
            throw new VerbsException(Errno.EINVAL, "cannot post sends in state " + s);
        }
        if (sq.isFull()) {
            throw new VerbsException(Errno.ENOMEM, "send queue full (" + sq.capacity() + ")");
        }
        final SendWqe w = sq.get(sq.tail);
        prepareSend(wr, w);
        sq.tail++;
        if (s == QpState.ERR || s == QpState.SQE) {
            flushSendQueue();
            return;
        }
        if (requester != null) {
            requester.progress(device.timers().nowNs());
        } else {
            sendProgress();
        }
    }

    /**
     * Binds a type 1 memory window ({@code ibv_bind_mw}): posts the bind on the send queue, where it
     * executes in order and completes as {@link WcOpcode#BIND_MW} (or MW_BIND_ERR when the region,
     * range or access do not allow it; the QP then enters ERR). A length of 0 leaves the window
     * bound to nothing.
     *
     * @param access {@link AccessFlags#REMOTE} bits the window grants
     * @return the window's new rkey, valid once the bind has executed
     * @throws VerbsException EINVAL (a type 2 window, another domain's window, a UD QP, state), ENOMEM
     */
    public int bindMw(
            final MemoryWindow mw,
            final long wrId,
            final int sendFlags,
            final MemoryRegion mr,
            final long addr,
            final long length,
            final int access) {
        Objects.requireNonNull(mw, "mw");
        return bindMw(mw, mw.peekType1Rkey(), wrId, sendFlags, mr, addr, length, access);
    }

    /**
     * {@link #bindMw(MemoryWindow, long, int, MemoryRegion, long, long, int)} with the new rkey chosen
     * by the caller (a driver library that computes it as {@code ibv_inc_rkey} does): it must keep
     * the window's index (EINVAL otherwise). A null region with length 0 unbinds the window.
     */
    public int bindMw(
            final MemoryWindow mw,
            final int rkey,
            final long wrId,
            final int sendFlags,
            final MemoryRegion mr,
            final long addr,
            final long length,
            final int access) {
        Objects.requireNonNull(mw, "mw");
        if ((rkey >>> 8) != (mw.rkey() >>> 8)) {
            fail("rkey 0x" + Integer.toHexString(rkey) + " is not the window's");
        }
        if (mw.type() != MemoryWindow.TYPE_1) {
            fail("ibv_bind_mw binds type 1 windows; type 2 windows use IBV_WR_BIND_MW");
        }
        if (mw.pd() != pd || !mw.isAllocated()) {
            fail("memory window of another protection domain, or deallocated");
        }
        final SendWorkRequest wr = new SendWorkRequest(1);
        wr.wrId = wrId;
        wr.opcode = WrOpcode.BIND_MW;
        wr.sendFlags = sendFlags & (SendFlags.SIGNALED | SendFlags.FENCE);
        wr.mw = mw;
        wr.bindMr = mr;
        wr.bindAddr = addr;
        wr.bindLength = length;
        wr.bindAccess = access;
        wr.rkey = rkey;
        bindingType1 = true;
        try {
            postSend(wr);
        } finally {
            bindingType1 = false;
        }
        mw.issueType1Rkey(wr.rkey);
        return wr.rkey;
    }

    /**
     * Posts a receive ({@code ibv_post_recv}).
     *
     * @throws VerbsException EINVAL (RESET, SRQ attached, too many SGEs), ENOMEM (queue full)
     */
    public void postRecv(final RecvWorkRequest wr) {
        checkLive();
        if (srq != null) {
            throw new VerbsException(Errno.EINVAL, "QP uses a shared receive queue");
        }
        if (attr.qpState == QpState.RESET) {
            throw new VerbsException(Errno.EINVAL, "cannot post receives in RESET");
        }
        rq.post(wr, pd, device);
        if (attr.qpState == QpState.ERR) {
            rq.flush(recvCq, qpNum);
        }
    }

    /**
     * Sets what runs when an arriving message finds this QP's own receive queue empty, before the
     * message is refused: a driver whose receives wait in a queue of its own (a ring the
     * application fills) moves them into the model there, so a receive posted before the message
     * arrived is always found, as with hardware. It may call {@link #postRecv}; null removes it. A
     * shared receive queue has its own ({@link SharedReceiveQueue#receiveRefill}).
     */
    public void receiveRefill(final Runnable refill) {
        this.receiveRefill = refill;
    }

    /** Destroys the QP ({@code ibv_destroy_qp}); outstanding work is discarded without completions. */
    public void destroy() {
        checkLive();
        sendOwedAck();
        if (requester != null) {
            requester.stop();
        }
        live = false;
        device.releaseQpn(this);
        device.release(Device.Resource.QP);
        sendCq.detachUser();
        recvCq.detachUser();
        if (srq != null) {
            srq.detach();
        }
        pd.onChildDestroyed();
    }

    @Override
    public void onTimer(final long nowNs, final long timerId) {
        if (!live) {
            return;
        }
        if (requester != null && requester.onTimer(nowNs, timerId)) {
            return;
        }
        if (responder != null) {
            responder.onTimer(timerId);
        }
    }

    /**
     * Sends the responder's deferred ACK before the QP stops answering (destroy, ERR, RESET): the
     * requester's application may have seen its last completion here and closed, and without the
     * ACK the requester resends into a QP that is gone until its retries run out.
     */
    private void sendOwedAck() {
        if (responder != null) {
            responder.sendOwedAck();
        }
    }

    /** Sends the responder's deferred, requested ACK before this QP's next request (RC only). */
    void flushRequestedAck() {
        if (responder != null) {
            responder.flushRequestedAck();
        }
    }

    @Override
    public String toString() {
        return "QueuePair{qpn=" + qpNum + ", " + type + ", " + attr.qpState + ", " + requester + '}';
    }

    // ---------------------------------------------------------------- state machine

    private void validateValues(final QpAttr a, final int mask) {
        final DeviceAttributes d = device.attributes();
        if ((mask & QpAttrMask.PKEY_INDEX) != 0 && a.pkeyIndex != 0) {
            fail("pkey_index " + a.pkeyIndex + " (the port has one P_Key)");
        }
        if ((mask & QpAttrMask.PORT) != 0 && a.portNum != 1) {
            fail("port_num " + a.portNum);
        }
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0 && (a.qpAccessFlags & ~AccessFlags.SUPPORTED) != 0) {
            fail("qp_access_flags 0x" + Integer.toHexString(a.qpAccessFlags));
        }
        if ((mask & QpAttrMask.PATH_MTU) != 0
                && (a.pathMtu == null || a.pathMtu.bytes() > d.maxMtu().bytes())) {
            fail("path_mtu " + a.pathMtu + " above the port's " + d.maxMtu());
        }
        if ((mask & QpAttrMask.AV) != 0 && (a.ahAttr == null || a.ahAttr.portNum() != 1)) {
            fail("invalid address vector");
        }
        if ((mask & QpAttrMask.DEST_QPN) != 0 && !Psn.isValid(a.destQpNum)) {
            fail("dest_qp_num beyond 24 bits");
        }
        if ((mask & QpAttrMask.RQ_PSN) != 0 && !Psn.isValid(a.rqPsn)) {
            fail("rq_psn beyond 24 bits");
        }
        if ((mask & QpAttrMask.SQ_PSN) != 0 && !Psn.isValid(a.sqPsn)) {
            fail("sq_psn beyond 24 bits");
        }
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0
                && (a.maxDestRdAtomic < 0 || a.maxDestRdAtomic > d.maxQpRdAtom())) {
            fail("max_dest_rd_atomic " + a.maxDestRdAtomic);
        }
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0 && (a.maxRdAtomic < 0 || a.maxRdAtomic > d.maxQpInitRdAtom())) {
            fail("max_rd_atomic " + a.maxRdAtomic);
        }
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0 && (a.minRnrTimer < 0 || a.minRnrTimer > 31)) {
            fail("min_rnr_timer " + a.minRnrTimer);
        }
        if ((mask & QpAttrMask.TIMEOUT) != 0 && (a.timeout < 0 || a.timeout > 31)) {
            fail("timeout " + a.timeout);
        }
        if ((mask & QpAttrMask.RETRY_CNT) != 0 && (a.retryCnt < 0 || a.retryCnt > 7)) {
            fail("retry_cnt " + a.retryCnt);
        }
        if ((mask & QpAttrMask.RNR_RETRY) != 0 && (a.rnrRetry < 0 || a.rnrRetry > 7)) {
            fail("rnr_retry " + a.rnrRetry);
        }
    }

    private void applyValues(final QpAttr a, final int mask) {
        if ((mask & QpAttrMask.PKEY_INDEX) != 0) {
            attr.pkeyIndex = a.pkeyIndex;
        }
        if ((mask & QpAttrMask.PORT) != 0) {
            attr.portNum = a.portNum;
        }
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0) {
            attr.qpAccessFlags = a.qpAccessFlags;
        }
        if ((mask & QpAttrMask.QKEY) != 0) {
            attr.qkey = a.qkey;
        }
        if ((mask & QpAttrMask.PATH_MTU) != 0) {
            attr.pathMtu = a.pathMtu;
        }
        if ((mask & QpAttrMask.AV) != 0) {
            attr.ahAttr = a.ahAttr;
        }
        if ((mask & QpAttrMask.DEST_QPN) != 0) {
            attr.destQpNum = a.destQpNum;
        }
        if ((mask & QpAttrMask.RQ_PSN) != 0) {
            attr.rqPsn = a.rqPsn;
        }
        if ((mask & QpAttrMask.SQ_PSN) != 0) {
            attr.sqPsn = a.sqPsn;
        }
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) {
            attr.maxDestRdAtomic = a.maxDestRdAtomic;
        }
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) {
            attr.maxRdAtomic = a.maxRdAtomic;
        }
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0) {
            attr.minRnrTimer = a.minRnrTimer;
        }
        if ((mask & QpAttrMask.TIMEOUT) != 0) {
            attr.timeout = a.timeout;
        }
        if ((mask & QpAttrMask.RETRY_CNT) != 0) {
            attr.retryCnt = a.retryCnt;
        }
        if ((mask & QpAttrMask.RNR_RETRY) != 0) {
            attr.rnrRetry = a.rnrRetry;
        }
        if ((mask & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) {
            attr.enSqdAsyncNotify = a.enSqdAsyncNotify;
        }
    }

    private void enter(final QpState from, final QpState to) {
        attr.qpState = to;
        switch (to) {
            case RESET -> {
                sendOwedAck();
                if (requester != null) {
                    requester.stop();
                }
                sq.head = sq.tail;
                if (rq != null) {
                    rq.clear();
                }
                if (connectedRecv != null) {
                    connectedRecv.drop();
                }
                final QpCap keep = attr.cap;
                final QpAttr fresh = new QpAttr();
                copyInto(fresh, attr);
                attr.cap = keep;
            }
            case RTR -> {
                commEstablished = false;
                if (responder != null) {
                    responder.init(attr);
                } else if (uc != null) {
                    uc.init(attr);
                }
            }
            case RTS -> {
                if (from == QpState.RTR) {
                    if (requester != null) {
                        requester.init(attr);
                    }
                } else if (requester != null) {
                    requester.updateAttributes(attr);
                    requester.progress(device.timers().nowNs());
                } else {
                    sendProgress();
                }
            }
            case SQD -> {
                if (requester != null) {
                    requester.onEnterSqd();
                } else if (attr.enSqdAsyncNotify) {
                    context.raise(AsyncEventType.SQ_DRAINED, this);
                }
            }
            case ERR -> enterError();
            default -> {}
        }
    }

    private static void copyInto(final QpAttr src, final QpAttr dst) {
        dst.qpState = src.qpState;
        dst.curQpState = src.curQpState;
        dst.pathMtu = src.pathMtu;
        dst.qkey = src.qkey;
        dst.rqPsn = src.rqPsn;
        dst.sqPsn = src.sqPsn;
        dst.destQpNum = src.destQpNum;
        dst.qpAccessFlags = src.qpAccessFlags;
        dst.ahAttr = src.ahAttr;
        dst.pkeyIndex = src.pkeyIndex;
        dst.enSqdAsyncNotify = src.enSqdAsyncNotify;
        dst.maxRdAtomic = src.maxRdAtomic;
        dst.maxDestRdAtomic = src.maxDestRdAtomic;
        dst.minRnrTimer = src.minRnrTimer;
        dst.portNum = src.portNum;
        dst.timeout = src.timeout;
        dst.retryCnt = src.retryCnt;
        dst.rnrRetry = src.rnrRetry;
    }

    private void enterError() {
        attr.qpState = QpState.ERR;
        sendOwedAck();
        if (requester != null) {
            requester.stop();
        }
        flushSendQueue();
        if (connectedRecv != null && connectedRecv.held()) {
            connectedRecv.drop();
            completeRecv(
                    connectedRecv.receive().wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, 0, 0, 0, false);
        }
        if (rq != null) {
            rq.flush(recvCq, qpNum);
        } else if (srq != null) {
            context.raise(AsyncEventType.QP_LAST_WQE_REACHED, this);
        }
    }

    private void flushSendQueue() {
        while (sq.head < sq.tail) {
            final SendWqe w = sq.get(sq.head);
            sq.head++;
            emitSendCompletion(w, WcStatus.WR_FLUSH_ERR);
        }
    }

    private static void fail(final String why) {
        throw new VerbsException(Errno.EINVAL, why);
    }

    private void checkLive() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "queue pair destroyed");
        }
    }

    // ---------------------------------------------------------------- posting

    private void prepareSend(final SendWorkRequest wr, final SendWqe w) {
        final WrOpcode op = wr.opcode;
        if (op == null) {
            fail("opcode missing");
        }
        if (type == QpType.UD && op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
            fail(op + " is not valid on a UD queue pair");
        }
        if (type == QpType.UC && (op.isReadOrAtomic() || op == WrOpcode.SEND_WITH_INV)) {
            fail(op + " is not valid on a UC queue pair (SEND, RDMA WRITE and memory window operations only)");
        }
        if (op == WrOpcode.BIND_MW) {
            if (wr.mw == null || (wr.bindMr == null && wr.bindLength != 0) || wr.bindLength < 0) {
                fail("BIND_MW needs a memory window, a memory region and a length >= 0");
            }
            if (wr.mw.type() != MemoryWindow.TYPE_2 && !bindingType1) {
                fail("a type 1 memory window is bound with ibv_bind_mw, not IBV_WR_BIND_MW");
            }
            if (wr.mw.pd().context() != context) {
                fail("memory window of another context");
            }
        }
        if (wr.numSge() > cap.maxSendSge) {
            fail("num_sge " + wr.numSge() + " > max_send_sge " + cap.maxSendSge);
        }
        final boolean inline = (wr.sendFlags & SendFlags.INLINE) != 0;
        long total = 0;
        if (op.isLocal()) {
            if (inline || wr.numSge() != 0) {
                fail(op + " carries no data");
            }
        } else if (inline) {
            if (!op.carriesPayload()) {
                fail("INLINE is only valid for SEND and RDMA WRITE");
            }
            final int len = wr.inlineData == null ? 0 : wr.inlineData.readableBytes();
            if (len > cap.maxInlineData) {
                fail("inline data " + len + " > max_inline_data " + cap.maxInlineData);
            }
            total = len;
        } else {
            for (int i = 0; i < wr.numSge(); i++) {
                if (wr.sgeLength(i) < 0) {
                    fail("negative sge length");
                }
                total += wr.sgeLength(i);
            }
        }
        if (op.isAtomic()) {
            if (device.attributes().atomicCap() == AtomicCap.NONE) {
                throw new VerbsException(Errno.EOPNOTSUPP, "device has no atomics");
            }
            if (wr.numSge() != 1 || wr.sgeLength(0) != 8) {
                fail("atomics need exactly one 8-byte sge");
            }
        }
        if (total > Integer.MAX_VALUE) {
            fail("message longer than 2^31 - 1 bytes");
        }
        if (type == QpType.UD) {
            if (wr.ah == null || !wr.ah.isLive() || wr.ah.pd() != pd) {
                fail("UD send needs a live address handle of the QP's protection domain");
            }
            if (total > attr.pathMtu.bytes()) {
                fail("UD message of " + total + " bytes exceeds the MTU");
            }
            w.ah = wr.ah.attr();
            w.remoteQpn = wr.remoteQpn;
            w.remoteQkey = wr.remoteQkey < 0 ? attr.qkey : wr.remoteQkey; // high bit: use the QP's Q_Key
        }
        w.wrId = wr.wrId;
        w.opcode = op;
        w.sendFlags = wr.sendFlags;
        w.signaled = sqSigAll || (wr.sendFlags & SendFlags.SIGNALED) != 0;
        w.immData = wr.immData;
        w.remoteAddr = wr.remoteAddr;
        w.rkey = wr.rkey;
        w.compareAdd = wr.compareAdd;
        w.swap = wr.swap;
        w.invalidateRkey = wr.invalidateRkey;
        w.mw = op == WrOpcode.BIND_MW ? wr.mw : null;
        w.bindMr = op == WrOpcode.BIND_MW ? wr.bindMr : null;
        w.bindAddr = wr.bindAddr;
        w.bindLength = wr.bindLength;
        w.bindAccess = wr.bindAccess;
        w.isInline = inline;
        w.totalLength = total;
        w.localError = null;
        w.responseDone = false;
        if (inline) {
            w.numSge = 0;
            if (total > 0) {
                wr.inlineData.getBytes(wr.inlineData.readerIndex(), w.inline, 0, (int) total);
            }
        } else {
            w.numSge = wr.numSge();
            final int needed = op.isReadOrAtomic() ? AccessFlags.LOCAL_WRITE : 0;
            for (int i = 0; i < w.numSge; i++) {
                final MemoryRegion m = device.lookupMr(wr.sgeLkey(i));
                final long addr = wr.sgeAddr(i);
                final int len = wr.sgeLength(i);
                w.length[i] = len;
                if (m == null || m.pd() != pd || !AccessFlags.has(m.access(), needed) || !m.contains(addr, len)) {
                    w.localError = WcStatus.LOC_PROT_ERR;
                    w.mr[i] = null;
                } else {
                    w.mr[i] = m;
                    w.offset[i] = addr - m.addr();
                }
            }
        }
        final int pmtu = attr.pathMtu.bytes();
        w.numPackets = op.isLocal() ? 0 : op.isAtomic() ? 1 : (int) Math.max(1, (total + pmtu - 1) / pmtu);
    }

    // ---------------------------------------------------------------- engine hooks

    Device device() {
        return device;
    }

    TransportCounters countersRef() {
        return counters;
    }

    int accessFlags() {
        return attr.qpAccessFlags;
    }

    /** The connected peer's QPN: a connected QP's receive completions name it ({@code src_qp}). */
    int peerQpn() {
        return attr.destQpNum;
    }

    /** The connected peer's IPv4 address, the source of every message this QP accepts. */
    int peerIpv4() {
        return attr.ahAttr == null ? 0 : attr.ahAttr.destIpv4();
    }

    int minRnrTimer() {
        return attr.minRnrTimer;
    }

    boolean isRequesterActive() {
        return attr.qpState == QpState.RTS || attr.qpState == QpState.SQD;
    }

    /** Fills addressing and BTH fields common to every RC packet of this QP. */
    void fillRcHeaders(final TransportPacket p) {
        p.srcMac = device.mac();
        p.srcIpv4 = device.ipv4();
        p.dstMac = attr.ahAttr.destMac();
        p.dstIpv4 = attr.ahAttr.destIpv4();
        p.dscp = attr.ahAttr.trafficClass() >>> 2;
        p.ecn = TransportPacket.ECN_ECT0;
        p.udpSrcPort = udpSrcPort;
        p.destQp = attr.destQpNum;
    }

    boolean takeReceive(final RecvWqe dst) {
        if (srq != null) {
            return srq.takeInto(dst);
        }
        if (rq.size() == 0 && receiveRefill != null) {
            receiveRefill.run();
        }
        return rq.takeInto(dst);
    }

    private int receiveMaxSge() {
        return srq != null ? srq.queue().maxSge() : rq.maxSge();
    }

    void completeSend(final SendWqe w, final WcStatus status) {
        if (status == WcStatus.SUCCESS && !w.signaled) {
            return;
        }
        emitSendCompletion(w, status);
    }

    private void emitSendCompletion(final SendWqe w, final WcStatus status) {
        final WorkCompletion wc = sendCq.claim();
        if (wc == null) {
            return;
        }
        wc.wrId = w.wrId;
        wc.status = status;
        wc.opcode = w.opcode.completionOpcode();
        wc.byteLen = (int) w.totalLength;
        wc.qpNum = qpNum;
        sendCq.publish(false);
    }

    void completeRecv(
            final long wrId,
            final WcStatus status,
            final WcOpcode opcode,
            final int byteLen,
            final boolean withImm,
            final int imm,
            final int srcQp,
            final int srcIpv4,
            final int extraFlags,
            final boolean solicited) {
        final WorkCompletion wc = recvCq.claim();
        if (wc == null) {
            return;
        }
        wc.wrId = wrId;
        wc.status = status;
        wc.opcode = opcode;
        wc.byteLen = byteLen;
        wc.qpNum = qpNum;
        wc.srcQp = srcQp;
        wc.srcIpv4 = srcIpv4;
        wc.wcFlags = extraFlags | (withImm ? WcFlags.WITH_IMM : 0);
        wc.immData = imm;
        recvCq.publish(solicited);
    }

    /**
     * Executes a memory window operation that reached the head of the send queue: null on success,
     * else its completion status (MW_BIND_ERR for a bind, LOC_QP_OP_ERR for an invalidation that
     * names no type 2 window bound in this domain).
     */
    WcStatus executeLocal(final SendWqe w) {
        if (w.opcode == WrOpcode.BIND_MW) {
            return w.mw.bind(this, w.rkey, w.bindMr, w.bindAddr, w.bindLength, w.bindAccess);
        }
        final MemoryWindow mw = device.lookupMw(w.invalidateRkey);
        return mw != null && mw.matches(w.invalidateRkey) && mw.invalidate(this, false) ? null : WcStatus.LOC_QP_OP_ERR;
    }

    /** A peer's SEND with Invalidate: invalidates a type 2 window bound through this QP; false if none. */
    boolean invalidateRemote(final int rkey) {
        final MemoryWindow mw = device.lookupMw(rkey);
        return mw != null && mw.matches(rkey) && mw.invalidate(this, true);
    }

    /** The requester failed: WQE {@code seq} completes with {@code status}, the rest flush, QP → ERR. */
    void failSendQueue(final long seq, final WcStatus status) {
        if (requester != null) {
            requester.stop();
        }
        while (sq.head < sq.tail) {
            final SendWqe w = sq.get(sq.head);
            final boolean culprit = sq.head == seq;
            sq.head++;
            emitSendCompletion(w, culprit ? status : WcStatus.WR_FLUSH_ERR);
        }
        enterError();
    }

    /** The responder detected a remote error (class B/C): QP → ERR and the event is raised. */
    void failFromResponder(final AsyncEventType event) {
        context.raise(event, this);
        enterError();
    }

    void onSendQueueDrained() {
        if (attr.enSqdAsyncNotify) {
            context.raise(AsyncEventType.SQ_DRAINED, this);
        }
    }

    /** A decoded packet addressed to this QP; {@code p.payload} is valid only during the call. */
    void onPacket(final TransportPacket p, final int frameBytes, final long nowNs) {
        counters.rxPackets++;
        counters.rxBytes += frameBytes;
        final QpState s = attr.qpState;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.ERR) {
            counters.droppedPackets++;
            return;
        }
        final int op = p.opcode;
        if (op == Opcodes.CNP) {
            counters.cnpsReceived++;
            if (requester != null) {
                requester.onCnp(nowNs);
            }
            return;
        }
        if (type == QpType.UD) {
            onUdPacket(p, nowNs);
            return;
        }
        if (p.srcIpv4 != attr.ahAttr.destIpv4()) {
            counters.droppedPackets++; // not from the connected peer
            return;
        }
        if (type == QpType.UC) {
            if (!Opcodes.isUcRequest(op)) {
                counters.droppedPackets++;
                return;
            }
            onCommEstablished(s);
            onDataPacketEcn(p, nowNs);
            uc.onRequest(p);
            return;
        }
        final boolean request = Opcodes.isRcRequest(op);
        if (request) {
            onCommEstablished(s);
        }
        if (request || Opcodes.isReadResponse(op)) {
            onDataPacketEcn(p, nowNs);
        }
        if (request) {
            responder.onRequest(p, nowNs);
        } else if (s == QpState.RTS || s == QpState.SQD) {
            requester.onResponse(p, nowNs);
        } else {
            counters.droppedPackets++;
        }
    }

    /** The first packet a connected QP receives in RTR raises COMM_EST, once per RTR (IBA 11.6.3). */
    private void onCommEstablished(final QpState s) {
        if (s == QpState.RTR && !commEstablished) {
            commEstablished = true;
            context.raise(AsyncEventType.COMM_EST, this);
        }
    }

    /** ECN: a CE-marked data packet makes this QP send a CNP to its peer, at most one per interval. */
    private void onDataPacketEcn(final TransportPacket p, final long nowNs) {
        if (p.ecn != TransportPacket.ECN_CE) {
            return;
        }
        counters.ecnMarked++;
        final long interval = device.config().cnpIntervalNs();
        if (lastCnpNs != Long.MIN_VALUE && nowNs - lastCnpNs < interval) {
            return;
        }
        lastCnpNs = nowNs;
        final TransportPacket cnp = device.txPacket();
        fillRcHeaders(cnp);
        cnp.ecn = TransportPacket.ECN_NOT_ECT;
        cnp.opcode = Opcodes.CNP;
        counters.cnpsSent++;
        device.transmit(cnp, counters);
    }

    // ---------------------------------------------------------------- UD and UC

    /** Sends what the send queue holds (UD and UC: nothing waits for an answer). */
    private void sendProgress() {
        if (uc != null) {
            ucProgress();
        } else {
            udProgress();
        }
    }

    private void ucProgress() {
        while (attr.qpState == QpState.RTS && sq.head < sq.tail) {
            final SendWqe w = sq.get(sq.head);
            final WcStatus failed =
                    w.localError != null ? w.localError : w.opcode.isLocal() ? executeLocal(w) : uc.send(w, attr);
            if (failed != null) {
                failSendQueue(sq.head, failed); // a connected QP's local error: QP -> ERR
                return;
            }
            sq.head++;
            completeSend(w, WcStatus.SUCCESS);
        }
    }

    private void udProgress() {
        while (attr.qpState == QpState.RTS && sq.head < sq.tail) {
            final SendWqe w = sq.get(sq.head);
            if (w.localError != null) {
                sq.head++;
                emitSendCompletion(w, w.localError);
                attr.qpState = QpState.SQE;
                flushSendQueue();
                return;
            }
            final TransportPacket p = device.txPacket();
            p.srcMac = device.mac();
            p.srcIpv4 = device.ipv4();
            p.dstMac = w.ah.destMac();
            p.dstIpv4 = w.ah.destIpv4();
            p.dscp = w.ah.trafficClass() >>> 2;
            p.ecn = TransportPacket.ECN_ECT0;
            p.udpSrcPort = udpSrcPort;
            p.opcode = w.opcode.hasImm() ? Opcodes.UD_SEND_ONLY_WITH_IMM : Opcodes.UD_SEND_ONLY;
            p.immData = w.immData;
            p.solicited = (w.sendFlags & SendFlags.SOLICITED) != 0;
            p.destQp = w.remoteQpn;
            p.psn = attr.sqPsn;
            attr.sqPsn = Psn.next(attr.sqPsn);
            p.dethQkey = w.remoteQkey;
            p.dethSrcQp = qpNum;
            final ByteBuf payload = device.scratch();
            w.gather(0, payload, (int) w.totalLength);
            p.payload(payload);
            device.transmit(p, counters);
            sq.head++;
            completeSend(w, WcStatus.SUCCESS);
        }
    }

    private final RecvWqe udRecv = new RecvWqe(16);

    private void onUdPacket(final TransportPacket p, final long nowNs) {
        final int op = p.opcode;
        if (op != Opcodes.UD_SEND_ONLY && op != Opcodes.UD_SEND_ONLY_WITH_IMM) {
            counters.droppedPackets++;
            return;
        }
        if (p.dethQkey != attr.qkey) {
            counters.droppedPackets++;
            return;
        }
        if (receiveMaxSge() > udRecv.mr.length || !takeReceive(udRecv)) {
            counters.udNoReceiveDrops++;
            return;
        }
        final int len = p.payloadLength();
        final boolean imm = Opcodes.hasImm(op);
        if (udRecv.protectionError) {
            completeRecv(
                    udRecv.wrId, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0, p.dethSrcQp, p.srcIpv4, 0, false);
            return;
        }
        if (udRecv.totalLength < GRH_BYTES + len) {
            completeRecv(
                    udRecv.wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, p.dethSrcQp, p.srcIpv4, 0, false);
            return;
        }
        udRecv.scatter(0, grh(p, len), 0, GRH_BYTES);
        if (len > 0) {
            udRecv.scatter(GRH_BYTES, p.payload, p.payloadIndex, len);
        }
        completeRecv(
                udRecv.wrId,
                WcStatus.SUCCESS,
                WcOpcode.RECV,
                GRH_BYTES + len,
                imm,
                p.immData,
                p.dethSrcQp,
                p.srcIpv4,
                WcFlags.GRH,
                p.solicited);
    }

    private final byte[] grhBytes = new byte[GRH_BYTES];

    /**
     * The 40-byte GRH area of a RoCEv2/IPv4 receive: 20 zero bytes, then the IPv4 header (as
     * rdma-core documents for RoCEv2 over IPv4).
     */
    private byte[] grh(final TransportPacket p, final int payloadLen) {
        final byte[] g = grhBytes;
        java.util.Arrays.fill(g, (byte) 0);
        final int ip = 20;
        final int totalLen = 20 + 8 + 12 + 8 + payloadLen + 4 + (Opcodes.hasImm(p.opcode) ? 4 : 0);
        g[ip] = 0x45;
        g[ip + 1] = (byte) ((p.dscp << 2) | p.ecn);
        g[ip + 2] = (byte) (totalLen >>> 8);
        g[ip + 3] = (byte) totalLen;
        g[ip + 6] = 0x40; // don't fragment
        g[ip + 8] = 64; // TTL
        g[ip + 9] = 17; // UDP
        putInt(g, ip + 12, p.srcIpv4);
        putInt(g, ip + 16, p.dstIpv4);
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += ((g[ip + i] & 0xFF) << 8) | (g[ip + i + 1] & 0xFF);
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        final int csum = ~sum & 0xFFFF;
        g[ip + 10] = (byte) (csum >>> 8);
        g[ip + 11] = (byte) csum;
        return g;
    }

    private static void putInt(final byte[] b, final int i, final int v) {
        b[i] = (byte) (v >>> 24);
        b[i + 1] = (byte) (v >>> 16);
        b[i + 2] = (byte) (v >>> 8);
        b[i + 3] = (byte) v;
    }
}
