package org.vrdma.shim;

import static org.vrdma.shim.ControlProtocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.vrdma.shim.VnicControlServer.Response;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.verbs.AddressHandle;
import org.vrdma.vnic.verbs.AhAttr;
import org.vrdma.vnic.verbs.AsyncEventType;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.MemoryRegion;
import org.vrdma.vnic.verbs.MemoryWindow;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.QpAttr;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpCap;
import org.vrdma.vnic.verbs.QpInitAttr;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.SendWorkRequest;
import org.vrdma.vnic.verbs.SharedReceiveQueue;
import org.vrdma.vnic.verbs.VerbsException;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * One application context: its verbs {@link Context} and the table of handles it may name. Confined
 * to the device thread, except {@link Channel#streamEvents}, which runs on the channel's connection
 * thread and only takes events from a queue.
 */
final class Session {
    private static final Logger LOG = System.getLogger(Session.class.getName());
    /** Events a channel buffers for an application that does not read them; more are dropped. */
    private static final int EVENT_QUEUE = 4096;

    private final VnicControlServer server;
    private final Device device;
    private final Context context;
    private final int pid;
    private final Map<Integer, Object> handles = new HashMap<>();
    private final Map<CompletionQueue, Cq> cqs = new IdentityHashMap<>();
    private final WorkCompletion[] wcs = new WorkCompletion[MAX_POLL];
    private final WorkCompletion scratchWc = new WorkCompletion();
    private final List<Qp> qps = new ArrayList<>();
    private final List<SrqRing> srqs = new ArrayList<>();
    /** The address handle a UD send named last: no map lookup (nor boxing) per datagram. */
    private int lastAhHandle;

    private AddressHandle lastAh;
    /** A doorbell task is queued on the device thread; set by the doorbell connection's thread. */
    private final AtomicBoolean doorbellQueued = new AtomicBoolean();
    /** A retry of QPs whose model queue was full is queued. */
    private boolean retryQueued;

    private volatile SocketChannel doorbellStream;
    /** The application's asynchronous events (its async_fd), once OPEN_ASYNC was asked for. */
    private final AsyncEventStream asyncEvents = new AsyncEventStream();

    /** Zero-copy mappings deregistered, to be unmapped by {@link #closeRetired}. */
    private final List<MemfdMemory> retired = new ArrayList<>();

    private volatile boolean hasRetired;
    private long asyncToken;
    private long doorbellToken;
    private int nextHandle = 1;
    private boolean released;

    Session(final VnicControlServer server, final Device device, final int pid) {
        this.server = server;
        this.device = device;
        this.context = device.open();
        this.pid = pid;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    int pid() {
        return pid;
    }

    /**
     * A completion queue, the application's cookie for it, its events not yet acknowledged and the
     * completion ring it shares with the application (null: completions stay in the model for
     * POLL_CQ).
     */
    private final class Cq {
        final CompletionQueue cq;
        final long cookie;
        final SharedRing ring;
        final int entries;
        int prod;
        int unacked;
        /** Completions the application never polled because its ring was full. */
        long ringFull;
        /** The channel events of this CQ go to, or null. */
        Channel channel;

        Cq(final CompletionQueue cq, final long cookie, final SharedRing ring, final int entries) {
            this.cq = cq;
            this.cookie = cookie;
            this.ring = ring;
            this.entries = entries;
        }

        /** Moves completions from the model into the shared ring while it has room. */
        void drain() {
            if (ring == null) {
                return;
            }
            final int cons = ring.getIntAcquire(CQ_CONS);
            int room = entries - (prod - cons);
            if (room <= 0 || room > entries) {
                return; // full, or a consumer counter the application corrupted
            }
            int moved = 0;
            boolean urgent = false; // a solicited or failed completion: wakes a solicited-only arm
            while (room > 0) {
                final int n;
                try {
                    n = cq.poll(wcs, Math.min(room, wcs.length));
                } catch (final VerbsException e) {
                    break; // overrun: the model keeps failing polls, as hardware does
                }
                if (n == 0) {
                    break;
                }
                for (int i = 0; i < n; i++) {
                    writeSlot(wcs[i]);
                    urgent |= wcs[i].solicited || wcs[i].status != WcStatus.SUCCESS;
                }
                room -= n;
                moved += n;
            }
            if (moved > 0) {
                ring.setIntRelease(CQ_PROD, prod);
                afterPublish(urgent);
            }
            if (cq.size() > 0) {
                ringFull++;
            }
        }

        /** An error completion the vNIC makes itself (a request it could not accept). */
        void push(final long wrId, final WcStatus status, final WcOpcode opcode, final int qpNum) {
            if (ring == null) {
                return;
            }
            final int cons = ring.getIntAcquire(CQ_CONS);
            if (prod - cons >= entries) {
                ringFull++;
                return;
            }
            publishQueueCounters();
            final WorkCompletion wc = scratchWc;
            wc.wrId = wrId;
            wc.status = status;
            wc.opcode = opcode;
            wc.vendorErr = 0;
            wc.byteLen = 0;
            wc.immData = 0;
            wc.qpNum = qpNum;
            wc.srcQp = 0;
            wc.wcFlags = 0;
            wc.pkeyIndex = 0;
            wc.srcIpv4 = 0;
            wc.solicited = false;
            writeSlot(wc);
            ring.setIntRelease(CQ_PROD, prod);
            afterPublish(true);
        }

        /**
         * After a publish: wake pollers sleeping on the producer counter, and answer an armed
         * ring ({@code ibv_req_notify_cq}) with one event on the channel. The full fence pairs
         * with the library's between announcing (arming, sleeping) and re-reading the counter.
         */
        private void afterPublish(final boolean urgent) {
            VarHandle.fullFence();
            if (ring.getIntAcquire(CQ_WAITERS) != 0 && (urgent || batchComplete())) {
                ring.wakeFutex(CQ_PROD);
                server.onFutexWake();
            }
            final int arm = ring.getIntAcquire(CQ_ARM);
            if (channel != null && arm != ring.getInt(CQ_NOTIFIED) && ((arm & 1) == 0 || urgent)) {
                ring.setIntRelease(CQ_NOTIFIED, arm);
                channel.onRingEvent(this);
            }
        }

        /**
         * Whether the sleepers' batch is there: a poller that expects many completions asks to be
         * woken once {@code prod - cons} reaches its batch, not for each (its sleep is bounded).
         */
        private boolean batchComplete() {
            final int batch = ring.getIntAcquire(CQ_WAKE_BATCH);
            return batch <= 1 || prod - ring.getIntAcquire(CQ_CONS) >= batch;
        }

        private void writeSlot(final WorkCompletion wc) {
            final long at = CQ_RING_HDR + (long) (prod & (entries - 1)) * CQ_SLOT_BYTES;
            ring.putLong(at, wc.wrId);
            ring.putInt(at + 8, wc.status.ordinal());
            ring.putInt(at + 12, wcOpcode(wc.opcode));
            ring.putInt(at + 16, wc.vendorErr);
            ring.putInt(at + 20, wc.byteLen);
            ring.putInt(at + 24, wc.immData);
            ring.putInt(at + 28, wc.qpNum);
            ring.putInt(at + 32, wc.srcQp);
            ring.putInt(at + 36, wc.wcFlags);
            ring.putInt(at + 40, wc.pkeyIndex & 0xFFFF);
            ring.putInt(at + 44, 0);
            ring.putInt(at + 48, wc.srcIpv4); // the slot's tail: what vr_wc leaves out
            ring.putInt(at + 52, wc.solicited ? WC_SLOT_SOLICITED : 0);
            prod++;
        }
    }

    /**
     * A queue pair and the send and receive rings it shares with the application. The vNIC drains
     * the rings into the model's queues on a doorbell, then arms the doorbell before it sleeps.
     */
    private final class Qp {
        final QueuePair qp;
        final SharedRing ring;
        final Cq sendCq;
        final Cq recvCq;
        final int sqEntries;
        final int rqEntries;
        final int sqStride;
        final int rqStride;
        final int maxSendSge;
        final int maxRecvSge;
        final int maxInline;
        final SendWorkRequest send;
        final RecvWorkRequest recv;
        final ByteBuf inline;
        final byte[] inlineBytes;
        int sqCons;
        int sqPublished;
        int rqCons;
        /** The model's send or receive queue was full: retried after the next completion. */
        boolean stalled;
        /** The ring broke (a producer counter beyond the ring): QP_FATAL was raised, the QP is in ERR. */
        boolean fatal;
        /** The local ACK timeout code the application set (the model may run a longer one). */
        int requestedTimeout;
        /** UD: the largest message (the port's MTU); 0 for RC. */
        final int udMtuBytes;

        Qp(final QueuePair qp, final SharedRing ring, final Cq sendCq, final Cq recvCq, final QpLayout l) {
            this.qp = qp;
            this.ring = ring;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
            this.sqEntries = l.sqEntries;
            this.rqEntries = l.rqEntries;
            this.sqStride = l.sqStride;
            this.rqStride = l.rqStride;
            this.maxSendSge = l.maxSendSge;
            this.maxRecvSge = l.maxRecvSge;
            this.maxInline = l.maxInline;
            this.send = new SendWorkRequest(l.maxSendSge);
            this.recv = new RecvWorkRequest(l.maxRecvSge);
            this.inlineBytes = new byte[Math.max(1, l.maxInline)];
            this.inline = Unpooled.wrappedBuffer(inlineBytes);
            this.udMtuBytes = qp.type() == QpType.UD ? qp.query().pathMtu.bytes() : 0;
            qp.receiveRefill(this::onReceiveQueueEmpty);
        }

        /** A message found the model's receive queue empty: move what the application posted meanwhile. */
        private void onReceiveQueueEmpty() {
            if (stalled) {
                return;
            }
            try {
                drainRecv();
            } catch (final RuntimeException e) {
                LOG.log(Level.WARNING, "pid " + pid + ": receive ring of QP " + qp.qpNum(), e); // never into the model
            }
        }

        /** Drains both rings; then arms the doorbell unless a queue was full. */
        void onDoorbell() {
            for (int round = 0; round < 64; round++) {
                drainRecv();
                drainSend();
                if (stalled) {
                    return;
                }
                ring.setIntVolatile(DB_ARMED, 1);
                VarHandle.fullFence();
                if (ring.getIntAcquire(SQ_PROD) == sqCons && ring.getIntAcquire(RQ_PROD) == rqCons) {
                    return;
                }
                ring.setIntVolatile(DB_ARMED, 0);
            }
            scheduleDoorbell(); // a producer that never stops: let other work run first
        }

        private void drainRecv() {
            final int prod = ring.getIntAcquire(RQ_PROD);
            if (prod - rqCons > rqEntries || prod - rqCons < 0) {
                onRingBroken("receive"); // a producer counter the application corrupted: nothing to trust
                return;
            }
            final long base = QP_RING_HDR + (long) sqEntries * sqStride;
            int done = 0;
            while (rqCons != prod) {
                final long at = base + (long) (rqCons & (rqEntries - 1)) * rqStride;
                final long wrId = ring.getLong(at);
                final int numSge = ring.getInt(at + 8);
                recv.reset();
                recv.wrId = wrId;
                if (numSge < 0 || numSge > maxRecvSge) {
                    recvCq.push(wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, qp.qpNum());
                } else {
                    for (int i = 0; i < numSge; i++) {
                        final long s = at + RQ_WQE_BYTES + (long) i * SGE_BYTES;
                        recv.addSge(ring.getLong(s), ring.getInt(s + 8), ring.getInt(s + 12));
                    }
                    try {
                        qp.postRecv(recv);
                    } catch (final VerbsException e) {
                        if (e.errno() == Errno.ENOMEM) {
                            stalled = true;
                            break;
                        }
                        recvCq.push(wrId, WcStatus.LOC_QP_OP_ERR, WcOpcode.RECV, qp.qpNum());
                    }
                }
                rqCons++;
                done++;
            }
            if (done > 0) {
                ring.setIntRelease(RQ_CONS, rqCons);
            }
        }

        private void drainSend() {
            final int prod = ring.getIntAcquire(SQ_PROD);
            if (prod - sqCons > sqEntries || prod - sqCons < 0) {
                onRingBroken("send");
                return;
            }
            int done = 0;
            while (sqCons != prod) {
                final long at = QP_RING_HDR + (long) (sqCons & (sqEntries - 1)) * sqStride;
                final long wrId = ring.getLong(at);
                final int opcode = ring.getInt(at + 8);
                final int flags = ring.getInt(at + 12);
                final int numSge = ring.getInt(at + 16);
                final int inlineLen = ring.getInt(at + 36);
                final WrOpcode op = opcode >= 0 && opcode < WR_OPCODES.length ? WR_OPCODES[opcode] : null;
                final WcOpcode wcOp = op == null ? WcOpcode.SEND : op.completionOpcode();
                // The slot is free again once read: counted now, so the counter the library sees is
                // published before any completion of it (a UD send completes inside postSend).
                sqCons++;
                if (op == null || numSge < 0 || numSge > maxSendSge || inlineLen < 0 || inlineLen > maxInline) {
                    sendCq.push(wrId, WcStatus.LOC_QP_OP_ERR, wcOp, qp.qpNum());
                } else if (udMtuBytes > 0 && udLength(at, flags, numSge, inlineLen) > udMtuBytes) {
                    sendCq.push(wrId, WcStatus.LOC_LEN_ERR, wcOp, qp.qpNum()); // a datagram is one packet
                } else {
                    final SendWorkRequest w = send.reset();
                    w.wrId = wrId;
                    w.opcode = op;
                    w.sendFlags =
                            flags & (SendFlags.FENCE | SendFlags.SIGNALED | SendFlags.SOLICITED | SendFlags.INLINE);
                    w.immData = ring.getInt(at + 20);
                    w.remoteAddr = ring.getLong(at + 24);
                    w.rkey = ring.getInt(at + 32);
                    w.compareAdd = ring.getLong(at + 40);
                    w.swap = ring.getLong(at + 48);
                    if (udMtuBytes > 0) {
                        // Only this application's own handles resolve; anything else is no AH (EINVAL).
                        w.ah = addressHandle(ring.getInt(at + 56));
                        w.remoteQpn = ring.getInt(at + 60);
                        w.remoteQkey = ring.getInt(at + 64);
                    }
                    if (op == WrOpcode.LOCAL_INV || op == WrOpcode.SEND_WITH_INV) {
                        w.invalidateRkey = w.immData; // invalidate_rkey shares the slot with imm_data
                    } else if (op == WrOpcode.BIND_MW) {
                        try {
                            if (!postBind(w, at)) {
                                sendCq.push(wrId, WcStatus.MW_BIND_ERR, wcOp, qp.qpNum());
                            }
                        } catch (final VerbsException e) {
                            if (e.errno() == Errno.ENOMEM) {
                                sqCons--; // not taken: read again after the next completion
                                stalled = true;
                                break;
                            }
                            sendCq.push(wrId, WcStatus.MW_BIND_ERR, wcOp, qp.qpNum());
                        }
                        done++;
                        continue;
                    }
                    if ((flags & SendFlags.INLINE) != 0) {
                        ring.getBytes(at + SQ_WQE_BYTES + (long) maxSendSge * SGE_BYTES, inlineBytes, inlineLen);
                        inline.setIndex(0, inlineLen);
                        w.inlineData = inline;
                    } else {
                        for (int i = 0; i < numSge; i++) {
                            final long s = at + SQ_WQE_BYTES + (long) i * SGE_BYTES;
                            w.addSge(ring.getLong(s), ring.getInt(s + 8), ring.getInt(s + 12));
                        }
                    }
                    try {
                        qp.postSend(w);
                    } catch (final VerbsException e) {
                        if (e.errno() == Errno.ENOMEM) {
                            sqCons--; // not taken: read again after the next completion
                            stalled = true;
                            break;
                        }
                        sendCq.push(wrId, WcStatus.LOC_QP_OP_ERR, wcOp, qp.qpNum());
                    }
                }
                done++;
            }
            if (done > 0) {
                publishSqCons();
            }
        }

        /**
         * A BIND_MW slot: remote_addr, compare_add (length), rkey (the new rkey), ah (the window's
         * handle), remote_qpn (the region's handle, 0 for none), remote_qkey (the access flags). A
         * type 1 window is bound as {@code ibv_bind_mw} asked, a type 2 one as {@code IBV_WR_BIND_MW}.
         * False when the handles name nothing of this application's; the model's refusal propagates.
         */
        private boolean postBind(final SendWorkRequest w, final long at) {
            final MemoryWindow mw = memoryWindow(ring.getInt(at + 56));
            final int mrHandle = ring.getInt(at + 60);
            final MemoryRegion mr = memoryRegion(mrHandle);
            if (mw == null || (mr == null && mrHandle != 0)) {
                return false;
            }
            final long length = ring.getLong(at + 40);
            final int access = ring.getInt(at + 64);
            if (mw.type() == MemoryWindow.TYPE_1) {
                qp.bindMw(mw, w.rkey, w.wrId, w.sendFlags, mr, w.remoteAddr, length, access);
            } else {
                w.mw = mw;
                w.bindMr = mr;
                w.bindAddr = w.remoteAddr;
                w.bindLength = length;
                w.bindAccess = access;
                qp.postSend(w);
            }
            return true;
        }

        /**
         * A work queue the vNIC cannot read any more, like a hardware queue whose WQE or doorbell
         * record is corrupt: a local work queue catastrophic error (IBA 11.6.3.1) moves the QP to
         * ERR, which flushes what the model holds, and raises QP_FATAL once.
         */
        private void onRingBroken(final String which) {
            if (fatal) {
                return;
            }
            fatal = true;
            LOG.log(Level.WARNING, "pid " + pid + ": " + which + " ring of QP " + qp.qpNum() + " is corrupt");
            if (qp.state() != QpState.ERR && qp.state() != QpState.RESET) {
                final QpAttr err = new QpAttr();
                err.qpState = QpState.ERR;
                qp.modify(err, QpAttrMask.STATE);
            }
            onAsyncEvent(AsyncEventType.QP_FATAL, qp);
        }

        /** Publishes the send slots read so far, if that changed. */
        void publishSqCons() {
            if (sqCons != sqPublished) {
                sqPublished = sqCons;
                ring.setIntRelease(SQ_CONS, sqCons);
            }
        }

        /** Bytes of a UD send slot's message. */
        private long udLength(final long at, final int flags, final int numSge, final int inlineLen) {
            if ((flags & SendFlags.INLINE) != 0) {
                return inlineLen;
            }
            long total = 0;
            for (int i = 0; i < numSge; i++) {
                total += ring.getInt(at + SQ_WQE_BYTES + (long) i * SGE_BYTES + 8) & 0xFFFF_FFFFL;
            }
            return total;
        }

        void destroy() {
            qps.remove(this);
            try {
                qp.destroy();
            } finally {
                ring.close();
            }
        }
    }

    /** Ring geometry of a QP, computed identically by the library (vrdma_proto.h). */
    record QpLayout(
            int maxSendWr,
            int maxRecvWr,
            int maxSendSge,
            int maxRecvSge,
            int maxInline,
            int sqEntries,
            int rqEntries,
            int sqStride,
            int rqStride) {
        static QpLayout of(
                final int maxSendWr,
                final int maxRecvWr,
                final int maxSendSge,
                final int maxRecvSge,
                final int maxInline) {
            return new QpLayout(
                    maxSendWr,
                    maxRecvWr,
                    maxSendSge,
                    maxRecvSge,
                    maxInline,
                    pow2AtLeast(maxSendWr),
                    maxRecvWr == 0 ? 0 : pow2AtLeast(maxRecvWr), // 0: on an SRQ, no receive slots
                    align64(SQ_WQE_BYTES + SGE_BYTES * maxSendSge + maxInline),
                    align64(RQ_WQE_BYTES + SGE_BYTES * maxRecvSge));
        }

        long bytes() {
            return QP_RING_HDR + (long) sqEntries * sqStride + (long) rqEntries * rqStride;
        }
    }

    static int pow2AtLeast(final int n) {
        int p = 1;
        while (p < n && p < (1 << 30)) {
            p <<= 1;
        }
        return p;
    }

    static int align64(final int n) {
        return (n + 63) & ~63;
    }

    private static final WrOpcode[] WR_OPCODES = WrOpcode.values();

    /** A completion channel and, once bound, the connection its events go to. */
    final class Channel {
        final int handle;
        final CompletionChannel channel;
        final long token;
        /** CQ cookies, 8 bytes each on the channel's connection. */
        private final EventStream<Long> events =
                new EventStream<>(EVENT_QUEUE, Long.BYTES, (cookie, out) -> out.putLong(cookie));

        Channel(final int handle, final CompletionChannel channel, final long token) {
            this.handle = handle;
            this.channel = channel;
            this.token = token;
        }

        /** Device thread: one completion event for {@code cq}. */
        void onEvent(final CompletionQueue cq) {
            channel.getEvent(); // the model queues it too; the socket carries it instead
            final Cq entry = cqs.get(cq);
            if (entry == null) {
                return;
            }
            entry.unacked++;
            events.offer(entry.cookie);
        }

        /**
         * Device thread: one completion event for a ring the library armed. It needs no
         * acknowledgement by the vNIC: the library counts acknowledgements itself.
         */
        void onRingEvent(final Cq entry) {
            events.offer(entry.cookie);
        }

        /** Connection thread: writes events until the channel is destroyed or the peer goes away. */
        void streamEvents(final SocketChannel ch) throws IOException {
            events.stream(ch);
        }

        /** Drops events of one CQ not yet written to the application. */
        void forget(final long cookie) {
            events.forget(e -> e == cookie);
        }

        void shutdown() {
            events.shutdown();
        }
    }

    VnicControlServer.SessionView view() {
        final List<MemoryRegion> mrs = new ArrayList<>();
        int pds = 0;
        int channels = 0;
        for (final Object o : handles.values()) {
            switch (o) {
                case MemoryRegion mr -> mrs.add(mr);
                case ProtectionDomain pd -> pds++;
                case Channel c -> channels++;
                default -> {}
            }
        }
        return new VnicControlServer.SessionView(pid, pds, List.copyOf(mrs), cqs.size(), channels, qps.size());
    }

    /** Serves one request; never throws for anything the application sent. */
    Response handle(final int op, final ByteBuffer in) {
        if (released) {
            return Response.error(EIO);
        }
        try {
            return switch (op) {
                case QUERY_DEVICE -> queryDevice();
                case QUERY_PORT -> queryPort(in);
                case QUERY_GID -> queryGid(in);
                case ALLOC_PD -> allocPd();
                case DEALLOC_PD -> deallocPd(in);
                case REG_MR -> regMr(in);
                case DEREG_MR -> deregMr(in);
                case CREATE_CHANNEL -> createChannel();
                case DESTROY_CHANNEL -> destroyChannel(in);
                case CREATE_CQ -> createCq(in);
                case DESTROY_CQ -> destroyCq(in);
                case REQ_NOTIFY_CQ -> reqNotifyCq(in);
                case ACK_CQ_EVENTS -> ackCqEvents(in);
                case POLL_CQ -> pollCq(in);
                case CREATE_QP -> createQp(in);
                case MODIFY_QP -> modifyQp(in);
                case QUERY_QP -> queryQp(in);
                case DESTROY_QP -> destroyQp(in);
                case OPEN_DOORBELL -> openDoorbell();
                case OPEN_ASYNC -> openAsync();
                case CREATE_AH -> createAh(in);
                case DESTROY_AH -> destroyAh(in);
                case CREATE_SRQ -> createSrq(in);
                case MODIFY_SRQ -> modifySrq(in);
                case QUERY_SRQ -> querySrq(in);
                case DESTROY_SRQ -> destroySrq(in);
                case ALLOC_MW -> allocMw(in);
                case DEALLOC_MW -> deallocMw(in);
                default -> Response.error(EOPNOTSUPP);
            };
        } catch (final VerbsException e) {
            return Response.error(e.errno().code());
        } catch (final java.nio.BufferUnderflowException e) {
            return Response.error(EINVAL);
        }
    }

    /** Destroys everything the application still holds, then its context. */
    void release() {
        if (released) {
            return;
        }
        released = true;
        final List<Object> all = new ArrayList<>(handles.values());
        handles.clear();
        closeDoorbell();
        if (asyncToken != 0) {
            server.forgetAsync(asyncToken);
        }
        asyncEvents.shutdown();
        // Children before parents: QPs, CQs, MRs, then PDs and channels.
        for (final Object o : all) {
            if (o instanceof Qp q) {
                quietly(q::destroy);
            }
        }
        for (final Object o : all) {
            if (o instanceof SrqRing r) {
                quietly(() -> destroySrq(r));
            } else if (o instanceof AddressHandle ah) {
                quietly(ah::destroy);
            }
        }
        for (final Object o : all) {
            if (o instanceof Cq c) {
                quietly(() -> forceDestroyCq(c));
            } else if (o instanceof MemoryWindow mw) {
                quietly(mw::deallocate); // unbinds it: its region can go next
            }
        }
        for (final Object o : all) {
            if (o instanceof MemoryRegion mr) {
                quietly(mr::deregister);
                unmap(mr.backing()); // a dead application's pages: unmapped whatever happened
            }
        }
        for (final Object o : all) {
            if (o instanceof ProtectionDomain pd) {
                quietly(pd::deallocate);
            } else if (o instanceof Channel c) {
                quietly(() -> destroyChannel(c));
            }
        }
        cqs.clear();
        quietly(context::close);
    }

    private void quietly(final Runnable r) {
        try {
            r.run();
        } catch (final RuntimeException e) {
            LOG.log(Level.WARNING, "pid " + pid + ": cleanup step failed", e);
        }
    }

    // ---------------------------------------------------------------- handles

    private int put(final Object o) {
        while (nextHandle == 0 || handles.containsKey(nextHandle)) {
            nextHandle++;
        }
        final int h = nextHandle++;
        handles.put(h, o);
        return h;
    }

    private <T> T get(final int handle, final Class<T> type) {
        final Object o = handles.get(handle);
        if (!type.isInstance(o)) {
            throw new VerbsException(org.vrdma.vnic.verbs.Errno.EINVAL, "no such " + type.getSimpleName());
        }
        return type.cast(o);
    }

    // ---------------------------------------------------------------- requests

    private Response queryDevice() {
        final DeviceAttributes a = context.queryDevice();
        final ByteBuffer b = Response.body(DEVICE_ATTR_BYTES);
        Response.putString(b, device.name(), 64);
        Response.putString(b, ShimInfo.FIRMWARE_VERSION, 64);
        final long guid = ShimInfo.nodeGuid(device.mac());
        b.putLong(guid).putLong(guid);
        b.putLong(a.maxMrSize());
        b.putLong(ShimInfo.PAGE_SIZE_CAP);
        b.putInt(ShimInfo.VENDOR_ID).putInt(ShimInfo.VENDOR_PART_ID).putInt(ShimInfo.HW_VERSION);
        b.putInt(ShimInfo.DEVICE_CAP_FLAGS);
        b.putInt(a.maxQp()).putInt(a.maxQpWr()).putInt(a.maxSge()).putInt(a.maxSge());
        b.putInt(a.maxCq()).putInt(a.maxCqe()).putInt(a.maxMr()).putInt(a.maxPd());
        b.putInt(a.maxQpRdAtom()).putInt(a.maxQpRdAtom() * a.maxQp()).putInt(a.maxQpInitRdAtom());
        b.putInt(a.atomicCap().ordinal());
        b.putInt(a.maxSrq()).putInt(a.maxSrqWr()).putInt(a.maxSrqSge()).putInt(a.maxAh());
        b.putInt(a.maxInlineData());
        b.putShort((short) 1).put((byte) 1).put((byte) ShimInfo.LOCAL_CA_ACK_DELAY);
        b.putInt(a.maxMw()).putInt(0);
        return Response.ok(b);
    }

    private Response queryPort(final ByteBuffer in) {
        checkPort(in.getInt());
        final int mtu = context.queryDevice().maxMtu().code();
        final ByteBuffer b = Response.body(PORT_ATTR_BYTES);
        final boolean up = device.portActive();
        b.putInt(up ? ShimInfo.PORT_STATE_ACTIVE : ShimInfo.PORT_STATE_DOWN)
                .putInt(mtu)
                .putInt(mtu);
        b.putInt(ShimInfo.GID_TABLE_LENGTH);
        b.putInt(ShimInfo.PORT_CAP_FLAGS);
        b.putInt((int) Math.min(context.queryDevice().maxMrSize(), 0x80000000L));
        b.putShort((short) 1);
        b.put((byte) ShimInfo.ACTIVE_WIDTH_4X).put((byte) ShimInfo.ACTIVE_SPEED_EDR);
        b.put((byte) (up ? ShimInfo.PHYS_STATE_LINK_UP : ShimInfo.PHYS_STATE_DISABLED))
                .put((byte) ShimInfo.LINK_LAYER_ETHERNET);
        b.putShort((short) 0);
        return Response.ok(b);
    }

    private Response queryGid(final ByteBuffer in) {
        checkPort(in.getInt());
        final int index = in.getInt();
        if (index != 0) {
            return Response.error(EINVAL);
        }
        final ByteBuffer b = Response.body(24);
        b.put(ShimInfo.roceGid(device.ipv4()));
        b.putInt(ShimInfo.GID_TYPE_ROCE_V2).putInt(0);
        return Response.ok(b);
    }

    private Response allocPd() {
        final ProtectionDomain pd = context.allocatePd();
        final ByteBuffer b = Response.body(8);
        b.putInt(put(pd)).putInt(0);
        return Response.ok(b);
    }

    private Response deallocPd(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, ProtectionDomain.class).deallocate();
        handles.remove(h);
        return Response.ok();
    }

    private Response regMr(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final int access = in.getInt() & ~ACCESS_OPTIONAL_RANGE;
        final long addr = in.getLong();
        final long length = in.getLong();
        final long iova = in.getLong();
        if (length <= 0 || addr == 0 || addr + length < addr && addr + length != 0) {
            return Response.error(EINVAL);
        }
        final MemoryStats.Counters counters = server.memoryCounters();
        MemoryRegionBacking memory = null;
        if (in.remaining() >= 16) {
            final int memfd = in.getInt();
            in.getInt();
            final long offset = in.getLong();
            try {
                memory = MemfdMemory.map(pid, memfd, offset, length);
            } catch (final VerbsException e) {
                // The pages stay reachable through the process: fall back, counted and logged.
                counters.refusedMemfds++;
                LOG.log(Level.INFO, "pid " + pid + ": zero-copy memory refused, using process_vm: " + e.getMessage());
            }
        }
        if (memory == null) {
            final ProcessMemory pm = new ProcessMemory(pid, addr, length, counters);
            pm.probe();
            memory = pm;
        }
        final MemoryRegion mr;
        try {
            mr = pd.registerMemoryRegion(memory, iova, access);
        } catch (final RuntimeException e) {
            unmap(memory);
            throw e;
        }
        final boolean zeroCopy = memory instanceof MemfdMemory;
        if (zeroCopy) {
            counters.zeroCopyRegions++;
        } else {
            counters.copyRegions++;
        }
        final ByteBuffer b = Response.body(16);
        b.putInt(put(mr)).putInt(mr.lkey()).putInt(mr.rkey()).putInt(zeroCopy ? MR_ZERO_COPY : 0);
        return Response.ok(b);
    }

    private Response deregMr(final ByteBuffer in) {
        final int h = in.getInt();
        deregister(get(h, MemoryRegion.class));
        handles.remove(h);
        return Response.ok();
    }

    /** Deregisters, then unmaps a zero-copy region's pages from the vNIC (a turn later). */
    private void deregister(final MemoryRegion mr) {
        mr.deregister();
        unmap(mr.backing());
    }

    /**
     * Retires a zero-copy mapping now and unmaps it in {@link #closeRetired}: a frame built before
     * may still send its payload from it until the underlay's next flush.
     */
    private void unmap(final MemoryRegionBacking memory) {
        if (memory instanceof MemfdMemory m) {
            m.retire();
            retired.add(m);
            hasRetired = true;
        }
    }

    /** Whether mappings wait for {@link #closeRetired}; read by the connection's thread. */
    boolean hasRetired() {
        return hasRetired;
    }

    /**
     * Device thread, in a task queued after the one that retired mappings: the flushes queued by
     * the frames built before ran first, so nothing points at the mappings any more. Unmaps them.
     */
    void closeRetired() {
        for (int i = 0; i < retired.size(); i++) {
            retired.get(i).close();
        }
        retired.clear();
        hasRetired = false;
    }

    private Response createChannel() {
        final CompletionChannel cc = context.createCompletionChannel();
        final int h = put(null);
        final Channel ch = new Channel(h, cc, server.newToken());
        handles.put(h, ch);
        cc.handler(ch::onEvent);
        server.registerToken(ch.token, ch);
        final ByteBuffer b = Response.body(16);
        b.putInt(h).putInt(0).putLong(ch.token);
        return Response.ok(b);
    }

    private Response destroyChannel(final ByteBuffer in) {
        final int h = in.getInt();
        destroyChannel(get(h, Channel.class));
        handles.remove(h);
        return Response.ok();
    }

    private void destroyChannel(final Channel ch) {
        ch.channel.destroy();
        ch.channel.handler(null);
        server.forgetToken(ch.token);
        ch.shutdown();
    }

    private Response createCq(final ByteBuffer in) {
        final int cqe = in.getInt();
        final int channelHandle = in.getInt();
        final int vector = in.getInt();
        in.getInt();
        final long cookie = in.getLong();
        if (vector != 0) {
            return Response.error(EINVAL);
        }
        final Channel channel = channelHandle == 0 ? null : get(channelHandle, Channel.class);
        SharedRing ring = null;
        int entries = 0;
        if (in.remaining() >= 8) {
            final int fd = in.getInt();
            final long bytes = in.getInt() & 0xFFFF_FFFFL;
            entries = pow2AtLeast(Math.max(1, cqe) + 1);
            if (cqe < 1 || bytes < CQ_RING_HDR + (long) entries * CQ_SLOT_BYTES) {
                return Response.error(EINVAL);
            }
            ring = SharedRing.map(pid, fd, CQ_RING_HDR + (long) entries * CQ_SLOT_BYTES);
        }
        final CompletionQueue cq;
        try {
            cq = context.createCompletionQueue(cqe, channel == null ? null : channel.channel);
        } catch (final RuntimeException e) {
            if (ring != null) {
                ring.close();
            }
            throw e;
        }
        final Cq entry = new Cq(cq, cookie, ring, entries);
        entry.channel = channel;
        cqs.put(cq, entry);
        if (ring != null) {
            cq.listener(this::onCompletion);
        }
        final ByteBuffer b = Response.body(8);
        b.putInt(put(entry)).putInt(cq.capacity());
        return Response.ok(b);
    }

    private Response destroyCq(final ByteBuffer in) {
        final int h = in.getInt();
        final Cq c = get(h, Cq.class);
        if (c.cq.channel() != null) {
            // Like the kernel: events the application never read do not keep the CQ alive, and
            // those still queued for its channel are dropped (the library waits only for events it
            // returned from ibv_get_cq_event to be acknowledged).
            for (final Object o : handles.values()) {
                if (o instanceof Channel ch && ch.channel == c.cq.channel()) {
                    ch.forget(c.cookie);
                }
            }
            forceDestroyCq(c);
        } else {
            destroyCq(c);
        }
        handles.remove(h);
        return Response.ok();
    }

    private void destroyCq(final Cq c) {
        c.cq.destroy();
        cqs.remove(c.cq);
        if (c.ring != null) {
            c.ring.close();
        }
    }

    /** Cleanup: an application that died cannot acknowledge its events any more. */
    private void forceDestroyCq(final Cq c) {
        if (c.unacked > 0) {
            c.cq.ackEvents(c.unacked);
            c.unacked = 0;
        }
        c.cq.destroy();
        cqs.remove(c.cq);
        if (c.ring != null) {
            c.ring.close();
        }
        c.unacked = 0;
    }

    private Response reqNotifyCq(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        c.cq.requestNotify(in.getInt() != 0);
        return Response.ok();
    }

    private Response ackCqEvents(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        final int n = in.getInt();
        c.cq.ackEvents(n);
        c.unacked -= n;
        return Response.ok();
    }

    private Response pollCq(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        final int max = Math.max(0, Math.min(in.getInt(), MAX_POLL));
        final int n = c.cq.poll(wcs, max);
        final ByteBuffer b = Response.body(8 + n * WC_BYTES);
        b.putInt(n).putInt(0);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            b.putLong(wc.wrId);
            b.putInt(wc.status.ordinal());
            b.putInt(wcOpcode(wc.opcode));
            b.putInt(wc.vendorErr).putInt(wc.byteLen).putInt(wc.immData);
            b.putInt(wc.qpNum).putInt(wc.srcQp).putInt(wc.wcFlags);
            b.putShort((short) wc.pkeyIndex).putShort((short) 0);
            b.put((byte) 0).put((byte) 0).putShort((short) 0);
        }
        return Response.ok(b);
    }

    // ---------------------------------------------------------------- data path

    /** Device thread, inside the model's publish: mirror the completion into the shared ring. */
    private void onCompletion(final CompletionQueue cq) {
        final Cq c = cqs.get(cq);
        if (c == null) {
            return;
        }
        try {
            publishQueueCounters();
            c.drain();
        } catch (final RuntimeException e) {
            // Never let a ring problem unwind through the model's transport.
            LOG.log(Level.WARNING, "pid " + pid + ": completion ring", e);
        }
        if (!retryQueued && hasStalledQp()) {
            // Never re-enter the model from inside its publish: retry as a task of its own.
            retryQueued = true;
            server.deviceExecutor().execute(this::retryStalled);
        }
    }

    /**
     * Publishes the work-queue consumer counters before a completion becomes visible, so the
     * library never sees a request completed while its slot still counts as taken (a full queue).
     */
    private void publishQueueCounters() {
        for (int i = 0; i < qps.size(); i++) {
            qps.get(i).publishSqCons();
        }
        for (int i = 0; i < srqs.size(); i++) {
            srqs.get(i).publishConsumed();
        }
    }

    private boolean hasStalledQp() {
        for (final Qp q : qps) {
            if (q.stalled) {
                return true;
            }
        }
        for (final SrqRing r : srqs) {
            if (r.stalled) {
                return true;
            }
        }
        return false;
    }

    private void retryStalled() {
        retryQueued = false;
        if (released) {
            return;
        }
        for (int i = 0; i < qps.size(); i++) { // draining never adds or removes QPs
            final Qp q = qps.get(i);
            if (q.stalled) {
                q.stalled = false;
                drainSafely(q);
            }
        }
        for (int i = 0; i < srqs.size(); i++) {
            final SrqRing r = srqs.get(i);
            if (r.stalled) {
                r.stalled = false;
                drainSafely(r);
            }
        }
    }

    /** Doorbell thread: queue one drain of every QP on the device thread. */
    void ringDoorbell() {
        if (!doorbellQueued.getAndSet(true)) {
            server.deviceExecutor().execute(this::onDoorbell);
        }
    }

    private void scheduleDoorbell() {
        ringDoorbell();
    }

    private void onDoorbell() {
        doorbellQueued.set(false);
        if (released) {
            return;
        }
        for (int i = 0; i < srqs.size(); i++) { // receives first, as for a QP's own queue
            final SrqRing r = srqs.get(i);
            if (!r.stalled) {
                drainSafely(r);
            }
        }
        for (int i = 0; i < qps.size(); i++) { // draining never adds or removes QPs
            final Qp q = qps.get(i);
            if (!q.stalled) {
                drainSafely(q);
            }
        }
    }

    private void drainSafely(final SrqRing r) {
        try {
            if (!r.onDoorbell()) {
                scheduleDoorbell(); // a producer that never stops: let other work run first
            }
        } catch (final RuntimeException e) {
            LOG.log(Level.WARNING, "pid " + pid + ": shared receive queue ring", e);
        }
    }

    private void drainSafely(final Qp q) {
        try {
            q.onDoorbell();
        } catch (final RuntimeException e) {
            LOG.log(Level.WARNING, "pid " + pid + ": work-queue ring of QP " + q.qp.qpNum(), e);
        }
    }

    private Response openDoorbell() {
        if (doorbellToken != 0 || doorbellStream != null) {
            return Response.error(EBUSY);
        }
        doorbellToken = server.newToken();
        server.registerDoorbell(doorbellToken, this);
        final ByteBuffer b = Response.body(8);
        b.putLong(doorbellToken);
        return Response.ok(b);
    }

    /** Doorbell connection thread: every byte read is a wake-up; returns when the peer goes away. */
    void streamDoorbells(final SocketChannel ch) throws IOException {
        doorbellStream = ch;
        final ByteBuffer in = ByteBuffer.allocate(256);
        try {
            while (!released && ch.isOpen()) {
                in.clear();
                final int n = ch.read(in);
                if (n < 0) {
                    return;
                }
                server.onDoorbellRead(n);
                ringDoorbell();
            }
        } finally {
            ch.close();
        }
    }

    private Response openAsync() {
        if (asyncToken != 0) {
            return Response.error(EBUSY);
        }
        asyncToken = server.newToken();
        server.registerAsync(asyncToken, this);
        final ByteBuffer b = Response.body(8);
        b.putLong(asyncToken);
        return Response.ok(b);
    }

    /** Waits up to {@code timeoutMs} until this application's async connection took its events. */
    void awaitAsyncEventsWritten(final long timeoutMs) {
        asyncEvents.awaitWritten(timeoutMs);
    }

    /** Async connection thread: writes this application's events until it goes away. */
    void streamAsyncEvents(final SocketChannel ch) throws IOException {
        asyncEvents.stream(ch);
    }

    /**
     * Device thread: an event the model raised about {@code source}. Queued for the application
     * if the object is one of its handles; false if it belongs to another application.
     */
    boolean onAsyncEvent(final AsyncEventType type, final Object source) {
        if (AsyncEventStream.kindOf(type) != AsyncEventStream.KIND_QP
                && AsyncEventStream.kindOf(type) != AsyncEventStream.KIND_CQ
                && AsyncEventStream.kindOf(type) != AsyncEventStream.KIND_SRQ) {
            // port and device events concern every application of the device
            asyncEvents.onEvent(type, AsyncEventStream.kindOf(type), type == AsyncEventType.DEVICE_FATAL ? 0 : 1);
            return false;
        }
        for (final Map.Entry<Integer, Object> e : handles.entrySet()) {
            final Object o = e.getValue();
            if (o == source
                    || o instanceof Qp q && q.qp == source
                    || o instanceof Cq c && c.cq == source
                    || o instanceof SrqRing r && r.srq == source) {
                asyncEvents.onEvent(type, AsyncEventStream.kindOf(type), e.getKey());
                return true;
            }
        }
        return false;
    }

    private void closeDoorbell() {
        if (doorbellToken != 0) {
            server.forgetDoorbell(doorbellToken);
        }
        final SocketChannel s = doorbellStream;
        if (s != null) {
            try {
                s.close();
            } catch (final IOException e) {
                LOG.log(Level.DEBUG, "closing doorbell", e);
            }
        }
    }

    private Response createQp(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final Cq sendCq = get(in.getInt(), Cq.class);
        final Cq recvCq = get(in.getInt(), Cq.class);
        final int srq = in.getInt();
        final int type = in.getInt();
        final boolean sigAll = in.getInt() != 0;
        final int maxSendWr = in.getInt();
        final int maxRecvWr = in.getInt();
        final int maxSendSge = in.getInt();
        final int maxRecvSge = in.getInt();
        final int maxInline = in.getInt();
        final int fd = in.getInt();
        final long ringBytes = in.getInt() & 0xFFFF_FFFFL;
        if (type != QPT_RC && type != QPT_UC && type != QPT_UD) {
            return Response.error(EOPNOTSUPP);
        }
        final SrqRing srqRing = srq == 0 ? null : get(srq, SrqRing.class); // only this application's
        if (srqRing != null && (maxRecvWr != 0 || maxRecvSge != 0)) {
            return Response.error(EINVAL); // a QP on an SRQ has no receive queue of its own
        }
        if (sendCq.ring == null || recvCq.ring == null) {
            return Response.error(EINVAL); // the data path needs completion rings
        }
        final DeviceAttributes a = context.queryDevice();
        final int minRecv = srqRing == null ? 1 : 0;
        if (maxSendWr < 1
                || maxSendWr > a.maxQpWr()
                || maxRecvWr < minRecv
                || maxRecvWr > a.maxQpWr()
                || maxSendSge < 1
                || maxSendSge > a.maxSge()
                || maxRecvSge < minRecv
                || maxRecvSge > a.maxSge()
                || maxInline < 0
                || maxInline > a.maxInlineData()) {
            return Response.error(EINVAL);
        }
        final QpLayout layout = QpLayout.of(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline);
        if (ringBytes < layout.bytes()) {
            return Response.error(EINVAL);
        }
        final SharedRing ring = SharedRing.map(pid, fd, layout.bytes());
        final QueuePair qp;
        try {
            final QpType qpType = switch (type) {
                case QPT_UD -> QpType.UD;
                case QPT_UC -> QpType.UC;
                default -> QpType.RC;
            };
            final QpInitAttr init = QpInitAttr.of(qpType, sendCq.cq);
            init.recvCq = recvCq.cq;
            init.srq = srqRing == null ? null : srqRing.srq;
            init.sqSigAll = sigAll;
            init.cap = new QpCap(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline);
            init.recoveryMode = RecoveryMode.SELECTIVE_REPEAT;
            qp = context.createQueuePair(pd, init);
        } catch (final RuntimeException e) {
            ring.close();
            throw e;
        }
        final Qp q = new Qp(qp, ring, sendCq, recvCq, layout);
        ring.setIntVolatile(DB_ARMED, 1);
        qps.add(q);
        final ByteBuffer b = Response.body(32);
        b.putInt(put(q)).putInt(qp.qpNum());
        b.putInt(maxSendWr)
                .putInt(maxRecvWr)
                .putInt(maxSendSge)
                .putInt(maxRecvSge)
                .putInt(maxInline);
        b.putInt(0);
        return Response.ok(b);
    }

    private Response modifyQp(final ByteBuffer in) {
        final Qp q = get(in.getInt(), Qp.class);
        final int mask = in.getInt();
        final QpAttr a = new QpAttr();
        final int state = in.getInt();
        final int curState = in.getInt();
        final int mtu = in.getInt();
        a.qpState = state >= 0 && state < QP_STATES.length ? QP_STATES[state] : null;
        a.curQpState = curState >= 0 && curState < QP_STATES.length ? QP_STATES[curState] : null;
        a.pathMtu = mtuOf(mtu);
        a.qkey = in.getInt();
        a.rqPsn = in.getInt();
        a.sqPsn = in.getInt();
        a.destQpNum = in.getInt();
        a.qpAccessFlags = in.getInt();
        a.pkeyIndex = in.getInt();
        a.portNum = in.getInt();
        a.maxRdAtomic = in.getInt();
        a.maxDestRdAtomic = in.getInt();
        a.minRnrTimer = in.getInt();
        a.timeout = in.getInt();
        a.retryCnt = in.getInt();
        a.rnrRetry = in.getInt();
        a.enSqdAsyncNotify = in.getInt() != 0;
        in.getInt(); // sq_draining
        in.position(in.position() + 5 * 4); // cap: not modifiable
        final byte[] dgid = new byte[16];
        in.get(dgid);
        final boolean global = in.getInt() != 0;
        in.getInt(); // sgid_index: one GID
        in.getInt(); // hop_limit
        final int trafficClass = in.getInt();
        in.getInt(); // flow_label
        in.getInt(); // dlid: RoCE has none
        in.getInt(); // sl
        final int ahPort = in.getInt();
        if ((mask & ~SUPPORTED_QP_MASK) != 0) {
            return Response.error(EINVAL);
        }
        if ((mask & QpAttrMask.STATE) != 0 && a.qpState == null
                || (mask & QpAttrMask.CUR_STATE) != 0 && a.curQpState == null
                || (mask & QpAttrMask.PATH_MTU) != 0 && a.pathMtu == null) {
            return Response.error(EINVAL);
        }
        if ((mask & QpAttrMask.AV) != 0) {
            // RoCE v2 addresses by GID: it must be the IPv4-mapped ::ffff:a.b.c.d of a peer ENI.
            if (!global || !ShimInfo.isIpv4MappedGid(dgid)) {
                return Response.error(EINVAL);
            }
            final int ip = ShimInfo.ipv4OfGid(dgid);
            a.ahAttr = new AhAttr(ip, ShimInfo.peerMac(ip), trafficClass & 0xFF, ahPort);
        }
        final int requestedTimeout = a.timeout;
        if ((mask & QpAttrMask.TIMEOUT) != 0 && a.timeout != 0 && a.timeout < MIN_TIMEOUT_CODE) {
            // The spec lets a device wait longer than asked. This vNIC shares its host's CPUs with
            // the applications, so its back-off may grow to ~1 s before retries run out.
            a.timeout = MIN_TIMEOUT_CODE;
        }
        q.qp.modify(a, mask);
        if ((mask & QpAttrMask.TIMEOUT) != 0) {
            q.requestedTimeout = requestedTimeout;
        }
        if ((mask & QpAttrMask.STATE) != 0 && q.qp.state() == QpState.RTS) {
            ringDoorbell(); // sends posted before RTS (the library refuses them) or receives waiting
        }
        return Response.ok();
    }

    private Response queryQp(final ByteBuffer in) {
        final Qp q = get(in.getInt(), Qp.class);
        final QpAttr a = q.qp.query();
        a.timeout = q.requestedTimeout; // what the application set, not the floor applied
        final ByteBuffer b = Response.body(QP_ATTR_BYTES);
        b.putInt(a.qpState.ordinal()).putInt(a.curQpState.ordinal()).putInt(a.pathMtu.code());
        b.putInt(a.qkey).putInt(a.rqPsn).putInt(a.sqPsn).putInt(a.destQpNum).putInt(a.qpAccessFlags);
        b.putInt(a.pkeyIndex).putInt(a.portNum).putInt(a.maxRdAtomic).putInt(a.maxDestRdAtomic);
        b.putInt(a.minRnrTimer).putInt(a.timeout).putInt(a.retryCnt).putInt(a.rnrRetry);
        b.putInt(a.enSqdAsyncNotify ? 1 : 0).putInt(a.sqDraining ? 1 : 0);
        final QpCap cap = a.cap;
        b.putInt(cap.maxSendWr).putInt(cap.maxRecvWr).putInt(cap.maxSendSge).putInt(cap.maxRecvSge);
        b.putInt(cap.maxInlineData);
        if (a.ahAttr != null) {
            b.put(ShimInfo.roceGid(a.ahAttr.destIpv4()));
            b.putInt(1)
                    .putInt(0)
                    .putInt(64)
                    .putInt(a.ahAttr.trafficClass())
                    .putInt(0)
                    .putInt(0)
                    .putInt(0);
            b.putInt(a.ahAttr.portNum());
        } else {
            b.put(new byte[16]);
            b.putInt(0)
                    .putInt(0)
                    .putInt(0)
                    .putInt(0)
                    .putInt(0)
                    .putInt(0)
                    .putInt(0)
                    .putInt(0);
        }
        b.putInt(0);
        return Response.ok(b);
    }

    private Response destroyQp(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, Qp.class).destroy();
        handles.remove(h);
        return Response.ok();
    }

    // ---------------------------------------------------------------- address handles and SRQs

    /** {@code struct vr_create_ah_req}: RoCE v2 only, so a global route to an IPv4-mapped GID. */
    private Response createAh(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final boolean global = in.getInt() != 0;
        final byte[] dgid = new byte[16];
        in.get(dgid);
        final int sgidIndex = in.getInt();
        in.getInt(); // hop_limit: the vSwitch routes by address
        final int trafficClass = in.getInt();
        in.getInt(); // flow_label
        in.getInt(); // dlid: RoCE has none
        in.getInt(); // sl
        final int port = in.getInt();
        if (!global || !ShimInfo.isIpv4MappedGid(dgid) || sgidIndex < 0 || sgidIndex >= ShimInfo.GID_TABLE_LENGTH) {
            return Response.error(EINVAL);
        }
        final int ip = ShimInfo.ipv4OfGid(dgid);
        final AddressHandle ah =
                pd.createAddressHandle(new AhAttr(ip, ShimInfo.peerMac(ip), trafficClass & 0xFF, port));
        final ByteBuffer b = Response.body(8);
        b.putInt(put(ah)).putInt(0);
        return Response.ok(b);
    }

    private Response destroyAh(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, AddressHandle.class).destroy();
        handles.remove(h);
        lastAh = null;
        return Response.ok();
    }

    /** ALLOC_MW: u32 pd, u32 type (1 or 2) → u32 handle, u32 rkey. */
    private Response allocMw(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final MemoryWindow mw = pd.allocMemoryWindow(in.getInt());
        final ByteBuffer b = Response.body(8);
        b.putInt(put(mw)).putInt(mw.rkey());
        return Response.ok(b);
    }

    private Response deallocMw(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, MemoryWindow.class).deallocate();
        handles.remove(h);
        return Response.ok();
    }

    /** This application's memory window {@code h}, or null. */
    MemoryWindow memoryWindow(final int h) {
        return handles.get(h) instanceof MemoryWindow mw ? mw : null;
    }

    /** This application's memory region {@code h}, or null (also for 0: none). */
    MemoryRegion memoryRegion(final int h) {
        return handles.get(h) instanceof MemoryRegion mr ? mr : null;
    }

    /** This application's address handle {@code h}, or null. */
    private AddressHandle addressHandle(final int h) {
        if (lastAh == null || h != lastAhHandle) {
            lastAh = handles.get(h) instanceof AddressHandle ah ? ah : null;
            lastAhHandle = h;
        }
        return lastAh;
    }

    private Response createSrq(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final int maxWr = in.getInt();
        final int maxSge = in.getInt();
        final int limit = in.getInt();
        final int fd = in.getInt();
        final long ringBytes = in.getInt() & 0xFFFF_FFFFL;
        final DeviceAttributes a = context.queryDevice();
        if (maxWr < 1 || maxWr > a.maxSrqWr() || maxSge < 1 || maxSge > a.maxSrqSge()) {
            return Response.error(EINVAL);
        }
        final long bytes = SrqRing.bytes(maxWr, maxSge);
        if (ringBytes < bytes) {
            return Response.error(EINVAL);
        }
        final SharedReceiveQueue srq = context.createSharedReceiveQueue(pd, maxWr, maxSge, limit);
        final SharedRing ring;
        try {
            ring = SharedRing.map(pid, fd, bytes);
        } catch (final RuntimeException e) {
            srq.destroy();
            throw e;
        }
        final SrqRing r = new SrqRing(srq, ring, maxWr, maxSge);
        srq.receiveRefill(() -> {
            try {
                r.onEmpty();
            } catch (final RuntimeException e) {
                LOG.log(Level.WARNING, "pid " + pid + ": shared receive queue ring", e); // never into the model
            }
        });
        ring.setIntVolatile(DB_ARMED, 1);
        srqs.add(r);
        final ByteBuffer b = Response.body(16);
        b.putInt(put(r)).putInt(srq.maxWr()).putInt(maxSge).putInt(0);
        return Response.ok(b);
    }

    /**
     * {@code struct vr_srq_attr} [+ i32 ring_fd, u32 ring_bytes]: IBV_SRQ_MAX_WR resizes the queue
     * (never below the receives posted: the ring is drained into the model first), IBV_SRQ_LIMIT
     * arms the limit event. A queue growing beyond its ring's slots comes with a new, larger ring
     * whose producer counter the library set to the old one's: the vNIC takes the old ring's
     * receives, then continues on the new ring at the same counters and unmaps the old one.
     */
    private Response modifySrq(final ByteBuffer in) {
        final SrqRing r = get(in.getInt(), SrqRing.class);
        final int mask = in.getInt();
        final int maxWr = in.getInt();
        in.getInt(); // max_sge: not modifiable
        final int limit = in.getInt();
        in.getInt();
        if ((mask & ~(SRQ_ATTR_MAX_WR | SRQ_ATTR_LIMIT)) != 0) {
            return Response.error(EINVAL);
        }
        final boolean resize = (mask & SRQ_ATTR_MAX_WR) != 0;
        SharedRing next = null;
        if (in.remaining() >= 8) {
            final int fd = in.getInt();
            final long ringBytes = in.getInt() & 0xFFFF_FFFFL;
            final long bytes = SrqRing.bytes(maxWr, r.maxSge);
            if (!resize || maxWr < 1 || maxWr > context.queryDevice().maxSrqWr() || ringBytes < bytes) {
                return Response.error(EINVAL);
            }
            next = SharedRing.map(pid, fd, bytes);
        } else if (resize && pow2AtLeast(Math.max(1, maxWr)) > r.entries()) {
            return Response.error(EINVAL); // the ring has no room for that many: a new ring must come
        }
        try {
            r.drain(); // every receive posted so far is in the model before its size is checked
            final int modelMask = (resize ? SharedReceiveQueue.ATTR_MAX_WR : 0)
                    | ((mask & SRQ_ATTR_LIMIT) != 0 ? SharedReceiveQueue.ATTR_LIMIT : 0);
            r.srq.modify(maxWr, limit, modelMask);
        } catch (final RuntimeException e) {
            if (next != null) {
                next.close();
            }
            throw e;
        }
        if (next != null) {
            r.replaceRing(next, maxWr);
            next.setIntVolatile(DB_ARMED, 1);
        }
        return Response.ok();
    }

    private Response querySrq(final ByteBuffer in) {
        final SrqRing r = get(in.getInt(), SrqRing.class);
        final ByteBuffer b = Response.body(24);
        b.putInt(0)
                .putInt(0)
                .putInt(r.srq.maxWr())
                .putInt(r.maxSge)
                .putInt(r.srq.limit())
                .putInt(0);
        return Response.ok(b);
    }

    private Response destroySrq(final ByteBuffer in) {
        final int h = in.getInt();
        destroySrq(get(h, SrqRing.class)); // EBUSY while QPs use it
        handles.remove(h);
        return Response.ok();
    }

    private void destroySrq(final SrqRing r) {
        r.srq.destroy();
        r.srq.receiveRefill(null);
        srqs.remove(r);
        r.close();
    }

    private static final QpState[] QP_STATES = QpState.values();
    /** Shortest local ACK timeout the vNIC runs: 4.096 us * 2^18, about 1.07 s of back-off ceiling. */
    private static final int MIN_TIMEOUT_CODE = 18;
    /** Attribute mask bits this vNIC understands (through IBV_QP_DEST_QPN). */
    private static final int SUPPORTED_QP_MASK = (1 << 21) - 1;

    private static Mtu mtuOf(final int code) {
        for (final Mtu m : Mtu.values()) {
            if (m.code() == code) {
                return m;
            }
        }
        return null;
    }

    /** {@code enum ibv_wc_opcode} value. */
    static int wcOpcode(final WcOpcode op) {
        return switch (op) {
            case SEND -> 0;
            case RDMA_WRITE -> 1;
            case RDMA_READ -> 2;
            case COMP_SWAP -> 3;
            case FETCH_ADD -> 4;
            case RECV -> 128;
            case RECV_RDMA_WITH_IMM -> 129;
            case BIND_MW -> 5;
            case LOCAL_INV -> 6;
        };
    }

    private static void checkPort(final int port) {
        if (port != 1) {
            throw new VerbsException(org.vrdma.vnic.verbs.Errno.EINVAL, "invalid port " + port);
        }
    }
}
