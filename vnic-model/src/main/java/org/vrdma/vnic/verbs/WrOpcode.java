package org.vrdma.vnic.verbs;

/** Operation of a send work request ({@code enum ibv_wr_opcode}, in its order: ordinals are the wire values). */
public enum WrOpcode {
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    SEND,
    SEND_WITH_IMM,
    RDMA_READ,
    ATOMIC_CMP_AND_SWP,
    ATOMIC_FETCH_AND_ADD,
    /** Invalidates a type 2 memory window's rkey on the local device (no packet). */
    LOCAL_INV,
    /** Binds a type 2 memory window to part of a memory region (no packet). */
    BIND_MW,
    /** SEND that also invalidates the peer's type 2 memory window named by its rkey (RC). */
    SEND_WITH_INV;

    /** True for operations that carry payload from local memory to the peer. */
    public boolean carriesPayload() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || isSend();
    }

    /** True for SEND, with immediate or with invalidate. */
    public boolean isSend() {
        return this == SEND || this == SEND_WITH_IMM || this == SEND_WITH_INV;
    }

    /** True for operations the device performs on its own memory keys, without any packet. */
    public boolean isLocal() {
        return this == LOCAL_INV || this == BIND_MW;
    }

    /** True for operations that wait for response data (READ and atomics). */
    public boolean isReadOrAtomic() {
        return this == RDMA_READ || this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** True for atomics. */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** True for operations that carry an immediate value. */
    public boolean hasImm() {
        return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }

    /** True for RDMA WRITE with or without immediate. */
    public boolean isWrite() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM;
    }

    /** The completion opcode this request produces on the send CQ. */
    public WcOpcode completionOpcode() {
        return switch (this) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> WcOpcode.SEND;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
            case LOCAL_INV -> WcOpcode.LOCAL_INV;
            case BIND_MW -> WcOpcode.BIND_MW;
        };
    }
}
