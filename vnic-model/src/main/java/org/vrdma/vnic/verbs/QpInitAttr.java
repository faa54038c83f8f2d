package org.vrdma.vnic.verbs;

import org.vrdma.vnic.transport.RecoveryMode;

/**
 * Creation attributes of a queue pair ({@code struct ibv_qp_init_attr}), plus the loss recovery mode
 * of this device's reliable transport.
 */
public final class QpInitAttr {
    public QpType qpType = QpType.RC;
    public CompletionQueue sendCq;
    public CompletionQueue recvCq;
    /** Shared receive queue, or null for a private one. */
    public SharedReceiveQueue srq;

    public QpCap cap = new QpCap(128, 128, 4, 4, 64);
    /** Every send work request generates a completion, whatever its flags. */
    public boolean sqSigAll;
    /** Loss recovery of an RC queue pair. */
    public RecoveryMode recoveryMode = RecoveryMode.GO_BACK_N;

    /** Attributes for a queue pair of {@code type} completing on {@code cq} for both queues. */
    public static QpInitAttr of(final QpType type, final CompletionQueue cq) {
        final QpInitAttr attr = new QpInitAttr();
        attr.qpType = type;
        attr.sendCq = cq;
        attr.recvCq = cq;
        return attr;
    }
}
