package org.vrdma.verbs;

import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.verbs.QpCap;
import org.vrdma.vnic.verbs.QpInitAttr;
import org.vrdma.vnic.verbs.QpType;

/**
 * Creation attributes of a queue pair ({@code struct ibv_qp_init_attr}, with {@code cap} flattened).
 * {@link IbvContext#createQp} writes back the sizes granted.
 */
public final class IbvQpInitAttr {
    /** RC or UD. */
    public QpType qpType = QpType.RC;
    /** CQ of send completions. */
    public IbvCq sendCq;
    /** CQ of receive completions. */
    public IbvCq recvCq;
    /** A shared receive queue (RC), or null for the QP's own. */
    public IbvSrq srq;
    /** Outstanding send work requests. */
    public int maxSendWr = 128;
    /** Outstanding receive work requests (0 with an SRQ). */
    public int maxRecvWr = 128;
    /** Scatter/gather elements per send request. */
    public int maxSendSge = 4;
    /** Scatter elements per receive request. */
    public int maxRecvSge = 4;
    /** Inline bytes per send request. */
    public int maxInlineData = 64;
    /** Every send request completes, whatever its SIGNALED flag ({@code sq_sig_all}). */
    public boolean sqSigAll;
    /** Loss recovery of an RC QP over the lossy overlay: go-back-N (RoCE) or selective repeat. */
    public RecoveryMode recoveryMode = RecoveryMode.SELECTIVE_REPEAT;

    /** An RC QP completing on {@code cq}, {@code depth} requests each way. */
    public static IbvQpInitAttr rc(IbvCq cq, int depth) {
        return of(QpType.RC, cq, depth);
    }

    /** A UD QP completing on {@code cq}, {@code depth} requests each way. */
    public static IbvQpInitAttr ud(IbvCq cq, int depth) {
        return of(QpType.UD, cq, depth);
    }

    /** A UC queue pair (SEND and RDMA WRITE, no ACKs) of {@code depth} on {@code cq}. */
    public static IbvQpInitAttr uc(IbvCq cq, int depth) {
        return of(QpType.UC, cq, depth);
    }

    private static IbvQpInitAttr of(QpType type, IbvCq cq, int depth) {
        IbvQpInitAttr a = new IbvQpInitAttr();
        a.qpType = type;
        a.sendCq = cq;
        a.recvCq = cq;
        a.maxSendWr = depth;
        a.maxRecvWr = depth;
        return a;
    }

    QpInitAttr toModel() {
        QpInitAttr m = new QpInitAttr();
        m.qpType = qpType;
        m.sendCq = sendCq.model();
        m.recvCq = recvCq.model();
        m.srq = srq == null ? null : srq.model();
        m.cap = new QpCap(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData);
        m.sqSigAll = sqSigAll;
        m.recoveryMode = recoveryMode;
        return m;
    }

    void grantedFrom(QpCap c) {
        maxSendWr = c.maxSendWr;
        maxRecvWr = c.maxRecvWr;
        maxSendSge = c.maxSendSge;
        maxRecvSge = c.maxRecvSge;
        maxInlineData = c.maxInlineData;
    }
}
