package org.vrdma.vnic.verbs;

/** Queue pair states ({@code enum ibv_qp_state}). */
public enum QpState {
    RESET,
    INIT,
    RTR,
    RTS,
    SQD,
    SQE,
    ERR
}
