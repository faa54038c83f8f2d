package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import org.vrdma.runtime.TimerService;
import org.vrdma.vnic.transport.Aeth;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.Psn;
import org.vrdma.vnic.transport.PsnBitmap;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;

/**
 * The responder half of an RC queue pair: executes requests in PSN order, checks remote access,
 * places payload, answers READs and atomics, ACKs (coalesced), NAKs sequence errors, RNR and errors,
 * and handles duplicates (re-ACK, READ re-execution, atomic replay).
 *
 * <p>Selective repeat: an RDMA WRITE packet beyond the expected PSN is placed at once if its message
 * is known, that is if the message's first packet (which carries the RETH) has arrived: packet
 * {@code psn} of a WRITE whose first packet has PSN {@code f} and RETH {@code (va, len)} lands at
 * {@code va + (psn - f) · pmtu}, and the RETH length fixes how many packets the message has. The
 * packet is recorded in a bitmap and acknowledged selectively; when the gap fills, the expected PSN
 * jumps over everything already placed. Other packets beyond a gap (SEND, READ, atomics, WRITE with
 * immediate) are dropped and resent, because their effects must happen in order.
 */
final class RcResponder {
    private static final int NO_MESSAGE = 0;
    private static final int IN_SEND = 1;
    private static final int IN_WRITE = 2;
    private static final int WRITE_CONTEXTS = 32;
    private static final int ATOMIC_REPLAY_SLOTS = 32;

    private final QueuePair qp;
    private final Device device;
    private final TransportCounters counters;
    private final RecoveryMode mode;
    private final ReceivePlacement recv;
    /**
     * Contexts of multi-packet WRITEs being placed, made when a slot is first needed (a flow's
     * responder of one message at a time uses one): null slots are free.
     */
    private final WriteContext[] writes = new WriteContext[WRITE_CONTEXTS];
    /** Context of a single-packet WRITE: its RETH says everything, so it never enters the table. */
    private final WriteContext single = new WriteContext();

    /** Answers of the last atomics executed, for duplicates; made at the first atomic (most QPs do none). */
    private AtomicReplay atomics;

    private final PsnBitmap received;
    private final PsnBitmap endsMessage;
    private final int ackCoalesce;

    private int pmtu;
    private int ePsn;
    private int msn;
    private int messageState;
    private boolean nakSent;
    private boolean rnrNakPending;
    private int unacked;
    /** A duplicate asked for an ACK: it leaves with the deferred ACK, one for a burst of duplicates. */
    private boolean duplicateAckOwed;
    /** The deferred ACK's timer: an ACK a packet asked for leaves after the packets received with it. */
    private long ackTimerId = TimerService.NO_TIMER;

    /** The original values the last {@link #ATOMIC_REPLAY_SLOTS} atomics returned, by PSN. */
    private static final class AtomicReplay {
        final int[] psn = new int[ATOMIC_REPLAY_SLOTS];
        final long[] original = new long[ATOMIC_REPLAY_SLOTS];
        final boolean[] valid = new boolean[ATOMIC_REPLAY_SLOTS];
        int next;
    }

    /** A WRITE message being placed: where its packets go. */
    private static final class WriteContext {
        boolean live;
        int firstPsn;
        int numPackets;
        MemoryRegion mr;
        long mrOffset;
        int dmaLength;
    }

    RcResponder(final QueuePair qp, final ReceivePlacement recv, final RecoveryMode mode) {
        this.qp = qp;
        this.device = qp.device();
        this.counters = qp.countersRef();
        this.mode = mode;
        this.recv = recv;
        this.received = new PsnBitmap(device.config().sackWindowPackets());
        this.endsMessage = new PsnBitmap(device.config().sackWindowPackets());
        this.ackCoalesce = Math.max(1, device.config().ackCoalescePackets());
    }

    /** Entering RTR: expect {@code rqPsn}. */
    void init(final QpAttr attr) {
        pmtu = attr.pathMtu.bytes();
        ePsn = attr.rqPsn;
        msn = 0;
        messageState = NO_MESSAGE;
        recv.drop();
        nakSent = false;
        rnrNakPending = false;
        unacked = 0;
        duplicateAckOwed = false;
        ackTimerId = TimerService.NO_TIMER;
        received.clearAll();
        endsMessage.clearAll();
        for (final WriteContext c : writes) {
            if (c != null) {
                c.live = false;
            }
        }
        if (atomics != null) {
            java.util.Arrays.fill(atomics.valid, false);
        }
    }

    /** The region the last successful {@link #checkRemote} reached (through a window or not). */
    private MemoryRegion checkedRegion;

    /** A request packet addressed to this QP. */
    void onRequest(final TransportPacket p, final long nowNs) {
        final int d = Psn.diff(p.psn, ePsn);
        if (d == 0) {
            nakSent = false;
            rnrNakPending = false;
            execute(p);
        } else if (d < 0) {
            onDuplicate(p);
        } else {
            onOutOfSequence(p, d);
        }
    }

    // ---------------------------------------------------------------- in order

    private void execute(final TransportPacket p) {
        final int op = p.opcode;
        if (Opcodes.isRcSend(op)) {
            executeSend(p);
        } else if (Opcodes.isRcWrite(op)) {
            executeWrite(p);
        } else if (op == Opcodes.RC_RDMA_READ_REQUEST) {
            executeRead(p);
        } else if (op == Opcodes.RC_COMPARE_SWAP || op == Opcodes.RC_FETCH_ADD) {
            executeAtomic(p);
        } else {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
        }
    }

    private void executeSend(final TransportPacket p) {
        final int op = p.opcode;
        final boolean first = Opcodes.isFirstOrOnly(op);
        final boolean last = Opcodes.isLastOrOnly(op);
        final int len = p.payloadLength();
        if (first == (messageState != NO_MESSAGE) || (!first && messageState != IN_SEND)) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        if ((!last && len != pmtu) || len > pmtu) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        switch (recv.placeSend(p, op)) {
            case ReceivePlacement.PLACED -> messageState = IN_SEND;
            case ReceivePlacement.COMPLETED -> {
                messageState = NO_MESSAGE;
                msn = (msn + 1) & Psn.MASK;
            }
            case ReceivePlacement.NO_RECEIVE -> {
                rnrNak(p);
                return;
            }
            case ReceivePlacement.LENGTH_ERROR, ReceivePlacement.INVALIDATE_ERROR -> {
                nakError(p, Aeth.NAK_INVALID_REQUEST);
                return;
            }
            default -> {
                nakError(p, Aeth.NAK_REMOTE_OPERATIONAL_ERROR);
                return;
            }
        }
        advance(p);
    }

    private void executeWrite(final TransportPacket p) {
        final int op = p.opcode;
        final boolean first = Opcodes.isFirstOrOnly(op);
        final boolean last = Opcodes.isLastOrOnly(op);
        final boolean imm = Opcodes.hasImm(op);
        if (first == (messageState != NO_MESSAGE) || (!first && messageState != IN_WRITE)) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        WriteContext ctx;
        if (first) {
            final int status = checkRemote(p.rethRkey, p.rethVa, p.rethLength, AccessFlags.REMOTE_WRITE);
            if (status != 0) {
                nakError(p, status);
                return;
            }
            ctx = openWrite(p, 0);
            if (ctx == null) {
                nakError(p, Aeth.NAK_REMOTE_OPERATIONAL_ERROR);
                return;
            }
        } else {
            ctx = findWrite(p.psn);
            if (ctx == null) {
                nakError(p, Aeth.NAK_INVALID_REQUEST);
                return;
            }
        }
        if (!fits(ctx, p)) {
            ctx.live = false;
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        if (imm && !recv.take()) {
            if (first) {
                ctx.live = false;
            }
            rnrNak(p);
            return;
        }
        try {
            place(ctx, p);
        } catch (final VerbsException e) {
            faultOrThrow(e);
            ctx.live = false;
            nakError(p, Aeth.NAK_REMOTE_ACCESS_ERROR);
            return;
        }
        if (last) {
            ctx.live = false;
            messageState = NO_MESSAGE;
            msn = (msn + 1) & Psn.MASK;
            if (imm) {
                recv.completeWriteWithImm(ctx.dmaLength, p);
            }
        } else {
            messageState = IN_WRITE;
        }
        advance(p);
    }

    private void executeRead(final TransportPacket p) {
        if (messageState != NO_MESSAGE) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        final int status = checkRemote(p.rethRkey, p.rethVa, p.rethLength, AccessFlags.REMOTE_READ);
        if (status != 0) {
            nakError(p, status);
            return;
        }
        final int n;
        try {
            n = sendReadResponses(p);
        } catch (final VerbsException e) {
            faultOrThrow(e);
            nakError(p, Aeth.NAK_REMOTE_ACCESS_ERROR);
            return;
        }
        ePsn = Psn.add(ePsn, n);
        msn = (msn + 1) & Psn.MASK;
        unacked = 0;
        drainPlaced();
    }

    private void executeAtomic(final TransportPacket p) {
        if (messageState != NO_MESSAGE || device.attributes().atomicCap() == AtomicCap.NONE) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        if ((p.atomicVa & 7) != 0) {
            nakError(p, Aeth.NAK_INVALID_REQUEST);
            return;
        }
        final int status = checkRemote(p.atomicRkey, p.atomicVa, 8, AccessFlags.REMOTE_ATOMIC);
        if (status != 0) {
            nakError(p, status);
            return;
        }
        final MemoryRegion mr = checkedRegion;
        final long off = p.atomicVa - mr.addr();
        final long original;
        try {
            original = p.opcode == Opcodes.RC_COMPARE_SWAP
                    ? mr.backing().compareAndSwap(off, p.atomicCompare, p.atomicSwapOrAdd)
                    : mr.backing().fetchAndAdd(off, p.atomicSwapOrAdd);
        } catch (final VerbsException e) {
            faultOrThrow(e);
            nakError(p, Aeth.NAK_REMOTE_ACCESS_ERROR);
            return;
        }
        if (atomics == null) {
            atomics = new AtomicReplay();
        }
        final AtomicReplay a = atomics;
        final int slot = a.next;
        a.next = (a.next + 1) % ATOMIC_REPLAY_SLOTS;
        a.psn[slot] = p.psn;
        a.original[slot] = original;
        a.valid[slot] = true;
        msn = (msn + 1) & Psn.MASK;
        ePsn = Psn.next(ePsn);
        unacked = 0;
        sendAtomicAck(p.psn, original);
        drainPlaced();
    }

    /**
     * The expected PSN moved past {@code p}; ACK every few packets or after filling a gap, and when
     * asked: then at the end of this turn of the device's thread (a timer due now), so the packets
     * that arrived together (several messages' last packets in one receive burst) share one ACK.
     */
    private void advance(final TransportPacket p) {
        ePsn = Psn.next(ePsn);
        unacked++;
        final boolean jumped = drainPlaced();
        if (unacked >= ackCoalesce || jumped) {
            sendAck();
        } else if (p.ackReq) {
            deferAck();
        }
    }

    /** Sends the ACK at the end of this turn of the device's thread (a timer due now). */
    private void deferAck() {
        if (ackTimerId == TimerService.NO_TIMER) {
            final TimerService timers = device.timers();
            ackTimerId = timers.scheduleAt(timers.nowNs(), qp);
        }
    }

    /**
     * Sends now an ACK that was asked for and is still deferred to the end of this turn, because
     * this QP is about to send a request: the ACK must not trail it. Hardware ACKs a message
     * before the application can even see it; an application's answer overtaking the ACK of
     * the message it answers would reach the peer's receive CQ before its send CQ.
     */
    void flushRequestedAck() {
        if (ackTimerId != TimerService.NO_TIMER && (unacked > 0 || duplicateAckOwed)) {
            sendAck(); // the timer still fires, and finds nothing owed
        }
    }

    /**
     * Sends now an ACK that is still deferred, because this QP is leaving the states that answer
     * (destroyed, or moved to ERR or RESET): its timer would find the QP gone or re-initialised, and
     * the requester, whose application already saw the message complete here, would resend into a
     * QP that never answers until its retries ran out.
     */
    void sendOwedAck() {
        if (ackTimerId == TimerService.NO_TIMER) {
            return;
        }
        device.timers().cancel(ackTimerId);
        ackTimerId = TimerService.NO_TIMER;
        if (unacked > 0 || duplicateAckOwed) {
            sendAck();
        }
    }

    /** Handles the deferred ACK's timer; false if {@code timerId} is not it. */
    boolean onTimer(final long timerId) {
        if (timerId != ackTimerId) {
            return false;
        }
        ackTimerId = TimerService.NO_TIMER;
        if (unacked > 0 || duplicateAckOwed) {
            sendAck();
        }
        return true;
    }

    /** Selective repeat: moves the expected PSN over packets already placed out of order. */
    private boolean drainPlaced() {
        if (mode != RecoveryMode.SELECTIVE_REPEAT) {
            return false;
        }
        boolean moved = false;
        while (received.get(ePsn)) {
            received.clear(ePsn);
            if (endsMessage.get(ePsn)) {
                endsMessage.clear(ePsn);
                final WriteContext ctx = findWrite(ePsn);
                if (ctx != null) {
                    ctx.live = false;
                }
                msn = (msn + 1) & Psn.MASK;
                messageState = NO_MESSAGE;
            } else {
                messageState = IN_WRITE;
            }
            ePsn = Psn.next(ePsn);
            moved = true;
        }
        return moved;
    }

    // ---------------------------------------------------------------- duplicates and gaps

    private void onDuplicate(final TransportPacket p) {
        counters.duplicateRequests++;
        final int op = p.opcode;
        if (op == Opcodes.RC_RDMA_READ_REQUEST) {
            // Re-execute: the requester lost (some of) the responses. PSNs come from the request.
            if (checkRemote(p.rethRkey, p.rethVa, p.rethLength, AccessFlags.REMOTE_READ) == 0) {
                final int end = Psn.add(p.psn, sendReadResponses(p));
                if (Psn.gt(end, ePsn) && messageState == NO_MESSAGE) {
                    // A repeated request asks again for everything asked before, in one request: it may
                    // reach past requests of the same READ that never arrived. Their responses are sent
                    // now, so the expected PSN moves past them (between READ requests no SEND or WRITE
                    // is half done).
                    ePsn = end;
                    msn = (msn + 1) & Psn.MASK;
                    nakSent = false;
                    unacked = 0;
                    drainPlaced();
                }
            }
        } else if (op == Opcodes.RC_COMPARE_SWAP || op == Opcodes.RC_FETCH_ADD) {
            final AtomicReplay a = atomics;
            for (int i = 0; a != null && i < ATOMIC_REPLAY_SLOTS; i++) {
                if (a.valid[i] && a.psn[i] == p.psn) {
                    sendAtomicAck(p.psn, a.original[i]);
                    return;
                }
            }
            // Too old to replay: executing it again would break atomicity, so stay silent.
        } else if (p.ackReq) {
            // A requester's timeout resends everything outstanding, each packet asking for an ACK:
            // the duplicates of one receive burst get one ACK at the end of the turn, not one each.
            duplicateAckOwed = true;
            deferAck();
        }
    }

    private void onOutOfSequence(final TransportPacket p, final int distance) {
        counters.outOfSequence++;
        if (mode == RecoveryMode.GO_BACK_N) {
            if (!nakSent && !rnrNakPending) {
                nakSent = true;
                sendAckPacket(Aeth.nak(Aeth.NAK_PSN_SEQUENCE_ERROR), ePsn, msn);
                counters.seqNaksSent++;
            }
            return;
        }
        if (distance >= received.size()) {
            return;
        }
        final int psn = p.psn;
        if (received.get(psn)) {
            counters.duplicateRequests++;
            sendSack(psn);
            return;
        }
        if (placeOutOfOrder(p)) {
            received.set(psn);
            if (Opcodes.isLastOrOnly(p.opcode)) {
                endsMessage.set(psn);
            }
            counters.outOfOrderPlaced++;
            sendSack(psn);
        } else if (!nakSent && !rnrNakPending) {
            nakSent = true;
            sendSack(Psn.prev(ePsn));
        }
    }

    private boolean placeOutOfOrder(final TransportPacket p) {
        final int op = p.opcode;
        if (!Opcodes.isRcWrite(op) || Opcodes.hasImm(op)) {
            return false;
        }
        WriteContext ctx;
        if (Opcodes.isFirstOrOnly(op)) {
            if (checkRemote(p.rethRkey, p.rethVa, p.rethLength, AccessFlags.REMOTE_WRITE) != 0) {
                return false; // NAKed when it arrives in order
            }
            // Keep one slot free: the message at the expected PSN must always find a context.
            ctx = openWrite(p, 1);
            if (ctx == null) {
                return false;
            }
        } else {
            ctx = findWrite(p.psn);
            if (ctx == null) {
                return false;
            }
        }
        if (!fits(ctx, p) || (Opcodes.isLastOrOnly(op) != (p.psn == Psn.add(ctx.firstPsn, ctx.numPackets - 1)))) {
            return false;
        }
        place(ctx, p);
        return true;
    }

    private void sendSack(final int sackPsn) {
        counters.seqNaksSent++;
        sendAckPacket(Aeth.nak(Aeth.NAK_PSN_SEQUENCE_ERROR), ePsn, sackPsn);
    }

    // ---------------------------------------------------------------- memory

    /**
     * 0 if {@code [va, va+len)} of region or window {@code rkey} is open to {@code access} (the region
     * reached is then {@link #checkedRegion}), else a NAK code. A zero-length READ or WRITE names no
     * memory: only the QP's access flags are checked, and {@link #checkedRegion} stays null.
     */
    private int checkRemote(final int rkey, final long va, final int len, final int access) {
        checkedRegion = null;
        if (!AccessFlags.has(qp.accessFlags(), access)) {
            return Aeth.NAK_REMOTE_ACCESS_ERROR;
        }
        if (len == 0) {
            return 0;
        }
        // A region's rkey or a bound memory window's: the region the access then reaches.
        final MemoryRegion mr = device.remoteRegion(qp, rkey, va, len, access);
        if (mr == null) {
            return Aeth.NAK_REMOTE_ACCESS_ERROR;
        }
        checkedRegion = mr;
        return 0;
    }

    /** A context for the WRITE that {@code p} starts, leaving {@code reserve} slots free; null if none. */
    private WriteContext openWrite(final TransportPacket p, final int reserve) {
        final int packets = Math.max(1, (p.rethLength + pmtu - 1) / pmtu);
        WriteContext free = null;
        if (packets == 1) {
            free = single;
        } else {
            int available = 0;
            int freeSlot = -1;
            for (int i = 0; i < writes.length; i++) {
                final WriteContext c = writes[i];
                if (c == null || !c.live || Psn.le(Psn.add(c.firstPsn, c.numPackets), ePsn)) {
                    if (c != null) {
                        c.live = false;
                    }
                    available++;
                    if (freeSlot < 0) {
                        freeSlot = i;
                    }
                }
            }
            if (available <= reserve) {
                return null;
            }
            free = writes[freeSlot];
            if (free == null) {
                free = new WriteContext();
                writes[freeSlot] = free;
            }
        }
        final MemoryRegion mr = checkedRegion; // openWrite follows a successful checkRemote
        free.live = true;
        free.firstPsn = p.psn;
        free.numPackets = packets;
        free.mr = mr;
        free.mrOffset = mr == null ? 0 : p.rethVa - mr.addr(); // null: a zero-length WRITE
        free.dmaLength = p.rethLength;
        return free;
    }

    private WriteContext findWrite(final int psn) {
        for (final WriteContext c : writes) {
            if (c != null && c.live && Psn.inRange(psn, c.firstPsn, c.numPackets)) {
                return c;
            }
        }
        return null;
    }

    /** True if the packet's payload is exactly what its position in the message calls for. */
    private boolean fits(final WriteContext ctx, final TransportPacket p) {
        final long off = (long) Psn.diff(p.psn, ctx.firstPsn) * pmtu;
        final long expect = Math.min(pmtu, ctx.dmaLength - off);
        final boolean last = Opcodes.isLastOrOnly(p.opcode);
        final boolean isLastPacket = p.psn == Psn.add(ctx.firstPsn, ctx.numPackets - 1);
        return off <= ctx.dmaLength && p.payloadLength() == expect && last == isLastPacket;
    }

    private void place(final WriteContext ctx, final TransportPacket p) {
        final int len = p.payloadLength();
        if (len > 0) {
            final long off = (long) Psn.diff(p.psn, ctx.firstPsn) * pmtu;
            ctx.mr.backing().write(ctx.mrOffset + off, p.payload, p.payloadIndex, len);
        }
    }

    // ---------------------------------------------------------------- output

    private int sendReadResponses(final TransportPacket req) {
        final long va = req.rethVa;
        final int len = req.rethLength;
        final MemoryRegion mr = checkedRegion; // sendReadResponses follows a successful checkRemote
        final int n = Math.max(1, (len + pmtu - 1) / pmtu);
        final int firstPsn = req.psn;
        for (int i = 0; i < n; i++) {
            final TransportPacket r = device.txPacket();
            qp.fillRcHeaders(r);
            if (n == 1) {
                r.opcode = Opcodes.RC_RDMA_READ_RESPONSE_ONLY;
            } else if (i == 0) {
                r.opcode = Opcodes.RC_RDMA_READ_RESPONSE_FIRST;
            } else if (i == n - 1) {
                r.opcode = Opcodes.RC_RDMA_READ_RESPONSE_LAST;
            } else {
                r.opcode = Opcodes.RC_RDMA_READ_RESPONSE_MIDDLE;
            }
            r.aethSyndrome = Aeth.ACK;
            r.aethMsn = msn;
            r.psn = Psn.add(firstPsn, i);
            final long off = (long) i * pmtu;
            final int chunk = (int) Math.min(pmtu, len - off);
            final ByteBuf payload = device.scratch();
            if (chunk > 0) {
                mr.backing().read(va - mr.addr() + off, payload, chunk);
            }
            r.payload(payload);
            device.transmit(r, counters);
        }
        return n;
    }

    private void sendAtomicAck(final int psn, final long original) {
        final TransportPacket r = device.txPacket();
        qp.fillRcHeaders(r);
        r.opcode = Opcodes.RC_ATOMIC_ACKNOWLEDGE;
        r.aethSyndrome = Aeth.ACK;
        r.aethMsn = msn;
        r.atomicOriginal = original;
        r.psn = psn;
        counters.txAcks++;
        device.transmit(r, counters);
    }

    private void sendAck() {
        unacked = 0;
        duplicateAckOwed = false;
        sendAckPacket(Aeth.ACK, Psn.prev(ePsn), msn);
    }

    private void sendAckPacket(final int syndrome, final int psn, final int msnField) {
        final TransportPacket r = device.txPacket();
        qp.fillRcHeaders(r);
        r.opcode = Opcodes.RC_ACKNOWLEDGE;
        r.aethSyndrome = syndrome;
        r.aethMsn = msnField & Psn.MASK;
        r.psn = psn;
        counters.txAcks++;
        device.transmit(r, counters);
    }

    private void rnrNak(final TransportPacket p) {
        counters.rnrNaksSent++;
        rnrNakPending = true;
        sendAckPacket(Aeth.rnrNak(qp.minRnrTimer()), p.psn, msn);
    }

    /**
     * A region's memory failed (EFAULT: the application unmapped it) while this responder touched
     * it: counted, and the caller answers with a NAK. Anything else is a bug and propagates.
     */
    private void faultOrThrow(final VerbsException e) {
        if (e.errno() != Errno.EFAULT) {
            throw e;
        }
        counters.localMemoryFaults++;
    }

    /** NAKs {@code p} with {@code code} and moves the QP to the error state (class B/C errors). */
    private void nakError(final TransportPacket p, final int code) {
        switch (code) {
            case Aeth.NAK_REMOTE_ACCESS_ERROR -> counters.accessNaksSent++;
            case Aeth.NAK_INVALID_REQUEST -> counters.invalidRequestNaksSent++;
            default -> counters.remoteOpNaksSent++;
        }
        // The NAK acknowledges everything before p: no ACK is owed any more.
        unacked = 0;
        duplicateAckOwed = false;
        sendAckPacket(Aeth.nak(code), p.psn, msn);
        qp.failFromResponder(
                code == Aeth.NAK_REMOTE_ACCESS_ERROR ? AsyncEventType.QP_ACCESS_ERR : AsyncEventType.QP_REQ_ERR);
    }
}
