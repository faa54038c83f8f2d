package org.vrdma.vnic.verbs;

/** Opcode of a work completion ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    COMP_SWAP,
    FETCH_ADD,
    RECV,
    RECV_RDMA_WITH_IMM
}
