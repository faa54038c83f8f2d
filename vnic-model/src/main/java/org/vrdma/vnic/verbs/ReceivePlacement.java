package org.vrdma.vnic.verbs;

import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;

/**
 * The receive a connected QP's responder (RC or UC) is filling: takes the receive WQE a SEND or a
 * WRITE with immediate consumes, scatters a SEND's packets into it in order and completes it.
 *
 * <p>The message rules around it (PSN order, opcode sequence, payload sizes) and what a failed step
 * does to the connection stay with the transport: RC NAKs and fails the QP, UC drops the message.
 * Each step answers with an {@code int} outcome, so a packet allocates nothing.
 *
 * <p>A receive still held when a message starts serves that message: UC keeps the receive of a
 * message it dropped for the next one; an RC responder never holds one then, because a broken
 * message fails its QP, which flushes the receive.
 */
final class ReceivePlacement {
    /** The packet's payload is placed; the message goes on. */
    static final int PLACED = 0;
    /** The message's last packet is placed and its receive completed successfully. */
    static final int COMPLETED = 1;
    /** The message's first packet found no receive posted. */
    static final int NO_RECEIVE = 2;
    /** The receive failed its protection checks, or its memory faulted: completed LOC_PROT_ERR. */
    static final int PROTECTION_ERROR = 3;
    /** The message is longer than its receive: completed LOC_LEN_ERR. */
    static final int LENGTH_ERROR = 4;
    /** A SEND with invalidate named a key this QP may not invalidate: completed REM_INV_REQ_ERR. */
    static final int INVALIDATE_ERROR = 5;

    private final QueuePair qp;
    private final TransportCounters counters;
    private final RecvWqe recv;
    /** RC's LOC_LEN_ERR completion says how many bytes were placed before; UC's says 0. */
    private final boolean lengthErrorReportsPlaced;

    private boolean held;
    private long placedBytes;

    ReceivePlacement(final QueuePair qp, final int maxRecvSge, final boolean lengthErrorReportsPlaced) {
        this.qp = qp;
        this.counters = qp.countersRef();
        this.recv = new RecvWqe(Math.max(1, maxRecvSge));
        this.lengthErrorReportsPlaced = lengthErrorReportsPlaced;
    }

    /** Whether a message in progress (or a dropped UC message) holds a receive; flushed when the QP fails. */
    boolean held() {
        return held;
    }

    RecvWqe receive() {
        return recv;
    }

    /** Forgets the held receive (the QP resets, or it flushed it). */
    void drop() {
        held = false;
    }

    /** Holds a receive for a new message: the one still held, else the next posted; false if none. */
    boolean take() {
        if (!held && !qp.takeReceive(recv)) {
            return false;
        }
        held = true;
        return true;
    }

    /**
     * Places SEND packet {@code p} ({@code rcOpcode}: its opcode in RC terms), which the caller found
     * in sequence and of a valid size; its first packet takes the receive, its last completes it.
     */
    int placeSend(final TransportPacket p, final int rcOpcode) {
        final int len = p.payloadLength();
        if (Opcodes.isFirstOrOnly(rcOpcode)) {
            if (!take()) {
                return NO_RECEIVE;
            }
            placedBytes = 0;
            if (recv.protectionError) {
                complete(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0, false);
                return PROTECTION_ERROR;
            }
        }
        if (placedBytes + len > recv.totalLength) {
            final int placed = lengthErrorReportsPlaced ? (int) placedBytes : 0;
            complete(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, placed, false, 0, false);
            return LENGTH_ERROR;
        }
        if (len > 0) {
            try {
                recv.scatter(placedBytes, p.payload, p.payloadIndex, len);
            } catch (final VerbsException e) {
                // The receive buffer's memory is gone: like a receive that failed protection checks.
                if (e.errno() != Errno.EFAULT) {
                    throw e;
                }
                counters.localMemoryFaults++;
                complete(WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0, false);
                return PROTECTION_ERROR;
            }
        }
        placedBytes += len;
        if (!Opcodes.isLastOrOnly(rcOpcode)) {
            return PLACED;
        }
        if (Opcodes.hasIeth(rcOpcode)) {
            // Only a type 2 window bound through this QP may be invalidated by its peer; otherwise the
            // receive fails and the requester gets an invalid request NAK (both QPs enter ERR).
            if (!qp.invalidateRemote(p.iethRkey)) {
                complete(WcStatus.REM_INV_REQ_ERR, WcOpcode.RECV, (int) placedBytes, false, 0, false);
                return INVALIDATE_ERROR;
            }
            // The completion carries the invalidated key where an immediate would stand.
            complete(
                    WcStatus.SUCCESS,
                    WcOpcode.RECV,
                    (int) placedBytes,
                    false,
                    p.iethRkey,
                    WcFlags.WITH_INV,
                    p.solicited);
            return COMPLETED;
        }
        complete(WcStatus.SUCCESS, WcOpcode.RECV, (int) placedBytes, Opcodes.hasImm(rcOpcode), p.immData, p.solicited);
        return COMPLETED;
    }

    /**
     * Completes the held receive for an RDMA WRITE with immediate of {@code byteLen} bytes whose last
     * packet is {@code p}. Such a WRITE uses its receive for the completion only: the data went where
     * the RETH said, so the receive's scatter list is neither written nor checked, as InfiniBand
     * defines it and Linux's rxe does (a receive with no scatter list is the usual one for it).
     */
    void completeWriteWithImm(final int byteLen, final TransportPacket p) {
        complete(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, byteLen, true, p.immData, p.solicited);
    }

    /** Completes the held receive, which the message no longer holds. */
    void complete(
            final WcStatus status,
            final WcOpcode opcode,
            final int byteLen,
            final boolean withImm,
            final int imm,
            final boolean solicited) {
        complete(status, opcode, byteLen, withImm, imm, 0, solicited);
    }

    private void complete(
            final WcStatus status,
            final WcOpcode opcode,
            final int byteLen,
            final boolean withImm,
            final int imm,
            final int wcFlags,
            final boolean solicited) {
        held = false;
        qp.completeRecv(
                recv.wrId, status, opcode, byteLen, withImm, imm, qp.peerQpn(), qp.peerIpv4(), wcFlags, solicited);
    }
}
