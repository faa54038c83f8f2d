package org.vrdma.vnic.transport;

/**
 * BTH opcodes (IBA 9.2, RoCEv2 annex) the transport emits and accepts, plus helpers that classify
 * them. Values are the wire values.
 */
public final class Opcodes {
    public static final int RC_SEND_FIRST = 0x00;
    public static final int RC_SEND_MIDDLE = 0x01;
    public static final int RC_SEND_LAST = 0x02;
    public static final int RC_SEND_LAST_WITH_IMM = 0x03;
    public static final int RC_SEND_ONLY = 0x04;
    public static final int RC_SEND_ONLY_WITH_IMM = 0x05;
    public static final int RC_RDMA_WRITE_FIRST = 0x06;
    public static final int RC_RDMA_WRITE_MIDDLE = 0x07;
    public static final int RC_RDMA_WRITE_LAST = 0x08;
    public static final int RC_RDMA_WRITE_LAST_WITH_IMM = 0x09;
    public static final int RC_RDMA_WRITE_ONLY = 0x0A;
    public static final int RC_RDMA_WRITE_ONLY_WITH_IMM = 0x0B;
    public static final int RC_RDMA_READ_REQUEST = 0x0C;
    public static final int RC_RDMA_READ_RESPONSE_FIRST = 0x0D;
    public static final int RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    public static final int RC_RDMA_READ_RESPONSE_LAST = 0x0F;
    public static final int RC_RDMA_READ_RESPONSE_ONLY = 0x10;
    public static final int RC_ACKNOWLEDGE = 0x11;
    public static final int RC_ATOMIC_ACKNOWLEDGE = 0x12;
    public static final int RC_COMPARE_SWAP = 0x13;
    public static final int RC_FETCH_ADD = 0x14;
    /** SEND Last and SEND Only with an IETH: the responder invalidates the rkey it carries. */
    public static final int RC_SEND_LAST_WITH_INV = 0x16;

    public static final int RC_SEND_ONLY_WITH_INV = 0x17;
    /** UC SEND and RDMA WRITE: the RC layouts with the transport bits 001 (IBA 9.2, table 38). */
    public static final int UC_BASE = 0x20;

    public static final int UC_SEND_FIRST = 0x20;
    public static final int UC_SEND_ONLY_WITH_IMM = 0x25;
    public static final int UC_RDMA_WRITE_FIRST = 0x26;
    public static final int UC_RDMA_WRITE_ONLY_WITH_IMM = 0x2B;
    public static final int UD_SEND_ONLY = 0x64;
    public static final int UD_SEND_ONLY_WITH_IMM = 0x65;
    /** RoCEv2 congestion notification packet. */
    public static final int CNP = 0x81;

    private Opcodes() {}

    /** SEND first/middle/last/only, with or without immediate or invalidate (RC). */
    public static boolean isRcSend(final int op) {
        return op >= RC_SEND_FIRST && op <= RC_SEND_ONLY_WITH_IMM || hasIeth(op);
    }

    /** SEND Last/Only with Invalidate: an IETH follows the BTH. */
    public static boolean hasIeth(final int op) {
        return op == RC_SEND_LAST_WITH_INV || op == RC_SEND_ONLY_WITH_INV;
    }

    /** RDMA WRITE first/middle/last/only, with or without immediate. */
    public static boolean isRcWrite(final int op) {
        return op >= RC_RDMA_WRITE_FIRST && op <= RC_RDMA_WRITE_ONLY_WITH_IMM;
    }

    /** Packets a requester sends (SEND, WRITE, READ request, atomics). */
    public static boolean isRcRequest(final int op) {
        return op <= RC_RDMA_READ_REQUEST || op == RC_COMPARE_SWAP || op == RC_FETCH_ADD || hasIeth(op);
    }

    /** UC SEND or RDMA WRITE packets (first/middle/last/only, with or without immediate). */
    public static boolean isUcRequest(final int op) {
        return op >= UC_SEND_FIRST && op <= UC_RDMA_WRITE_ONLY_WITH_IMM;
    }

    /** The RC opcode with the same operation as UC opcode {@code ucOp}, for the helpers above. */
    public static int ucToRc(final int ucOp) {
        return ucOp - UC_BASE;
    }

    /** READ responses. */
    public static boolean isReadResponse(final int op) {
        return op >= RC_RDMA_READ_RESPONSE_FIRST && op <= RC_RDMA_READ_RESPONSE_ONLY;
    }

    /** Packets that start a message. */
    public static boolean isFirstOrOnly(final int op) {
        return switch (op) {
            case RC_SEND_FIRST,
                    RC_SEND_ONLY,
                    RC_SEND_ONLY_WITH_IMM,
                    RC_SEND_ONLY_WITH_INV,
                    RC_RDMA_WRITE_FIRST,
                    RC_RDMA_WRITE_ONLY,
                    RC_RDMA_WRITE_ONLY_WITH_IMM,
                    RC_RDMA_READ_REQUEST,
                    RC_COMPARE_SWAP,
                    RC_FETCH_ADD -> true;
            default -> false;
        };
    }

    /** Packets that end a message. */
    public static boolean isLastOrOnly(final int op) {
        return switch (op) {
            case RC_SEND_LAST,
                    RC_SEND_LAST_WITH_IMM,
                    RC_SEND_ONLY,
                    RC_SEND_ONLY_WITH_IMM,
                    RC_SEND_LAST_WITH_INV,
                    RC_SEND_ONLY_WITH_INV,
                    RC_RDMA_WRITE_LAST,
                    RC_RDMA_WRITE_LAST_WITH_IMM,
                    RC_RDMA_WRITE_ONLY,
                    RC_RDMA_WRITE_ONLY_WITH_IMM,
                    RC_RDMA_READ_REQUEST,
                    RC_COMPARE_SWAP,
                    RC_FETCH_ADD -> true;
            default -> false;
        };
    }

    /** Packets with an immediate-data header. */
    public static boolean hasImm(final int op) {
        return op == RC_SEND_LAST_WITH_IMM
                || op == RC_SEND_ONLY_WITH_IMM
                || op == RC_RDMA_WRITE_LAST_WITH_IMM
                || op == RC_RDMA_WRITE_ONLY_WITH_IMM
                || op == UD_SEND_ONLY_WITH_IMM;
    }

    /** Packets with an RETH. */
    public static boolean hasReth(final int op) {
        return op == RC_RDMA_WRITE_FIRST
                || op == RC_RDMA_WRITE_ONLY
                || op == RC_RDMA_WRITE_ONLY_WITH_IMM
                || op == RC_RDMA_READ_REQUEST;
    }

    /** Packets with an AETH. */
    public static boolean hasAeth(final int op) {
        return op == RC_ACKNOWLEDGE
                || op == RC_ATOMIC_ACKNOWLEDGE
                || op == RC_RDMA_READ_RESPONSE_FIRST
                || op == RC_RDMA_READ_RESPONSE_LAST
                || op == RC_RDMA_READ_RESPONSE_ONLY;
    }
}
