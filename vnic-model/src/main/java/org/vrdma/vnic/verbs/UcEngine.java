package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.Psn;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;

/**
 * Both halves of a UC queue pair (IBA 9.8.2, 9.9.2): SEND and RDMA WRITE to one connected peer
 * with no acknowledgements and no retransmission.
 *
 * <p>Requester: a work request's packets (UC opcodes, first/middle/last/only, RETH on the first
 * WRITE packet, immediate on the last) leave as soon as it is posted, and it completes when its
 * last packet has left, as UC hardware does.
 *
 * <p>Responder: packets are taken in PSN order. A gap (a lost packet) or a packet that breaks the
 * message's rules drops the message in progress; the responder then waits for the next first or
 * only packet, whatever its PSN, and starts over there (a SEND's receive is kept for that message,
 * since the dropped one never completes). A WRITE whose RETH fails the access checks, a SEND or a
 * WRITE with immediate with no receive posted (the WRITE's last packet is then not placed) or a
 * message longer than its receive are dropped silently too, and counted in {@link
 * TransportCounters#ucDroppedMessages}: UC has no NAKs. A zero-length WRITE names no memory, so its
 * rkey is not checked.
 */
final class UcEngine {
    private static final int NO_MESSAGE = 0;
    private static final int IN_SEND = 1;
    private static final int IN_WRITE = 2;
    /** The rest of a broken message is dropped until the next first or only packet. */
    private static final int DROPPING = 3;

    private final QueuePair qp;
    private final Device device;
    private final TransportCounters counters;
    private final ReceivePlacement recv;

    private int pmtu;
    private int ePsn;
    private int messageState;
    private long writeOffset;
    private MemoryRegion writeMr;
    private long writeMrOffset;
    private int writeLength;

    UcEngine(final QueuePair qp, final ReceivePlacement recv) {
        this.qp = qp;
        this.device = qp.device();
        this.counters = qp.countersRef();
        this.recv = recv;
    }

    /** Entering RTR: expect {@code rqPsn}. */
    void init(final QpAttr attr) {
        pmtu = attr.pathMtu.bytes();
        ePsn = attr.rqPsn;
        messageState = NO_MESSAGE;
        recv.drop();
    }

    // ---------------------------------------------------------------- requester

    /**
     * Sends {@code w} whole from PSN {@code attr.sqPsn} on; returns null when every packet left, or
     * the status it completes with (its memory could not be read).
     */
    WcStatus send(final SendWqe w, final QpAttr attr) {
        final boolean write = w.opcode.isWrite();
        final boolean imm = w.opcode.hasImm();
        final int mtu = attr.pathMtu.bytes();
        final int n = w.numPackets;
        long offset = 0;
        for (int i = 0; i < n; i++) {
            final boolean first = i == 0;
            final boolean last = i == n - 1;
            final int len = (int) Math.min(mtu, w.totalLength - offset);
            final TransportPacket p = device.txPacket();
            qp.fillRcHeaders(p);
            p.opcode = Opcodes.UC_BASE + opcode(write, first, last, imm);
            p.psn = attr.sqPsn;
            if (write && first) {
                p.rethVa = w.remoteAddr;
                p.rethRkey = w.rkey;
                p.rethLength = (int) w.totalLength;
            }
            if (last) {
                p.immData = w.immData;
                p.solicited = (w.sendFlags & SendFlags.SOLICITED) != 0;
            }
            final ByteBuf payload = device.scratch();
            try {
                w.gather(offset, payload, len);
            } catch (final VerbsException e) {
                if (e.errno() != Errno.EFAULT) {
                    throw e;
                }
                counters.localMemoryFaults++;
                return WcStatus.LOC_PROT_ERR;
            }
            p.payload(payload);
            attr.sqPsn = Psn.next(attr.sqPsn);
            device.transmit(p, counters);
            offset += len;
        }
        return null;
    }

    /** The RC opcode of packet (first, last) of a SEND or WRITE; the caller adds the UC base. */
    private static int opcode(final boolean write, final boolean first, final boolean last, final boolean imm) {
        if (first && last) {
            return write
                    ? (imm ? Opcodes.RC_RDMA_WRITE_ONLY_WITH_IMM : Opcodes.RC_RDMA_WRITE_ONLY)
                    : (imm ? Opcodes.RC_SEND_ONLY_WITH_IMM : Opcodes.RC_SEND_ONLY);
        }
        if (first) {
            return write ? Opcodes.RC_RDMA_WRITE_FIRST : Opcodes.RC_SEND_FIRST;
        }
        if (last) {
            return write
                    ? (imm ? Opcodes.RC_RDMA_WRITE_LAST_WITH_IMM : Opcodes.RC_RDMA_WRITE_LAST)
                    : (imm ? Opcodes.RC_SEND_LAST_WITH_IMM : Opcodes.RC_SEND_LAST);
        }
        return write ? Opcodes.RC_RDMA_WRITE_MIDDLE : Opcodes.RC_SEND_MIDDLE;
    }

    // ---------------------------------------------------------------- responder

    /** A UC request packet from the connected peer. */
    void onRequest(final TransportPacket p) {
        final int op = Opcodes.ucToRc(p.opcode);
        final boolean first = Opcodes.isFirstOrOnly(op);
        if (first) {
            if (messageState == IN_SEND || messageState == IN_WRITE) {
                dropMessage(); // its last packet was lost
            }
            if (p.psn != ePsn) {
                counters.outOfSequence++; // packets were lost before: start over here
            }
            messageState = NO_MESSAGE;
        } else if (p.psn != ePsn || messageState == NO_MESSAGE || messageState == DROPPING) {
            if (messageState == IN_SEND || messageState == IN_WRITE) {
                dropMessage();
            }
            if (p.psn != ePsn) {
                counters.outOfSequence++;
            }
            messageState = DROPPING;
            counters.droppedPackets++;
            ePsn = Psn.next(p.psn);
            return;
        }
        ePsn = Psn.next(p.psn);
        if (Opcodes.isRcSend(op)) {
            onSend(p, op, first);
        } else {
            onWrite(p, op, first);
        }
    }

    private void onSend(final TransportPacket p, final int op, final boolean first) {
        final boolean last = Opcodes.isLastOrOnly(op);
        final int len = p.payloadLength();
        if (!first && messageState != IN_SEND) {
            breakMessage();
            return;
        }
        if ((!last && len != pmtu) || len > pmtu) {
            breakMessage();
            return;
        }
        switch (recv.placeSend(p, op)) {
            case ReceivePlacement.PLACED -> messageState = IN_SEND;
            case ReceivePlacement.COMPLETED -> messageState = NO_MESSAGE;
            case ReceivePlacement.NO_RECEIVE -> {
                counters.udNoReceiveDrops++;
                breakMessage();
            }
            default -> breakMessage();
        }
    }

    private void onWrite(final TransportPacket p, final int op, final boolean first) {
        final boolean last = Opcodes.isLastOrOnly(op);
        final int len = p.payloadLength();
        if (!first && messageState != IN_WRITE) {
            breakMessage();
            return;
        }
        if (first) {
            if (!AccessFlags.has(qp.accessFlags(), AccessFlags.REMOTE_WRITE) || p.rethLength < 0) {
                breakMessage();
                return;
            }
            // A region's rkey or a bound memory window's; a zero-length WRITE names no memory.
            final MemoryRegion mr = p.rethLength == 0
                    ? null
                    : device.remoteRegion(qp, p.rethRkey, p.rethVa, p.rethLength, AccessFlags.REMOTE_WRITE);
            if (mr == null && p.rethLength != 0) {
                breakMessage();
                return;
            }
            writeMr = mr;
            writeMrOffset = mr == null ? 0 : p.rethVa - mr.addr();
            writeLength = p.rethLength;
            writeOffset = 0;
        }
        final long remaining = writeLength - writeOffset;
        if (len > pmtu || len > remaining || (!last && len != pmtu) || (last && len != remaining)) {
            breakMessage();
            return;
        }
        final boolean imm = last && Opcodes.hasImm(op);
        if (imm && !recv.take()) {
            // The immediate has nowhere to go: the message is dropped before its last packet is placed.
            counters.udNoReceiveDrops++;
            breakMessage();
            return;
        }
        if (len > 0) {
            try {
                writeMr.backing().write(writeMrOffset + writeOffset, p.payload, p.payloadIndex, len);
            } catch (final VerbsException e) {
                fault(e);
                breakMessage();
                return;
            }
        }
        writeOffset += len;
        if (!last) {
            messageState = IN_WRITE;
            return;
        }
        messageState = NO_MESSAGE;
        if (imm) {
            recv.completeWriteWithImm(writeLength, p);
        }
    }

    /** The packet broke its message: the message is dropped and the rest of it ignored. */
    private void breakMessage() {
        dropMessage();
        messageState = DROPPING;
        counters.droppedPackets++;
    }

    /** A SEND's receive stays held and serves the next message. */
    private void dropMessage() {
        counters.ucDroppedMessages++;
        writeOffset = 0;
    }

    private void fault(final VerbsException e) {
        if (e.errno() != Errno.EFAULT) {
            throw e;
        }
        counters.localMemoryFaults++;
    }
}
