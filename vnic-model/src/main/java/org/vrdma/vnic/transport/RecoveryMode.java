package org.vrdma.vnic.transport;

/** How a reliable queue pair recovers from packet loss. */
public enum RecoveryMode {
    /**
     * RoCE behaviour: the responder accepts only the expected PSN and NAKs the first gap; the
     * requester resends everything from the NAKed PSN.
     */
    GO_BACK_N,
    /**
     * IRN-style: the responder places RDMA WRITE packets that arrive out of order, keeps a bitmap of
     * them and reports each arrival beyond a gap in a selective NAK; the requester resends only what
     * is missing. Completions stay in order.
     */
    SELECTIVE_REPEAT
}
