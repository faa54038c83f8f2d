package org.vrdma.vnic.verbs;

/** Opcode of a work completion ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    COMP_SWAP,
    FETCH_ADD,
    RECV,
    RECV_RDMA_WITH_IMM,
    /** A memory window bind ({@code ibv_bind_mw} or {@code IBV_WR_BIND_MW}) completed. */
    BIND_MW,
    /** A local invalidation ({@code IBV_WR_LOCAL_INV}) completed. */
    LOCAL_INV
}
