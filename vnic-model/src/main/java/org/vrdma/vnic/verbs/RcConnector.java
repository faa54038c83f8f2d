package org.vrdma.vnic.verbs;

/**
 * Brings an RC queue pair from RESET to RTS towards a known peer, with the attributes an
 * application sets after exchanging QP number, PSNs and address out of band (what perftest does
 * after its TCP exchange, and what rdma_cm does for its users).
 */
public final class RcConnector {
    private RcConnector() {}

    /**
     * RESET → INIT → RTR → RTS, with remote write, read and atomic access, 7 retries, infinite RNR
     * retry and 16 outstanding reads/atomics each way.
     *
     * @param timeout the local ACK timeout attribute (4.096 µs × 2^timeout)
     */
    public static void connect(
            QueuePair qp, int destQpn, int destIpv4, long destMac, Mtu mtu, int sqPsn, int rqPsn, int timeout) {
        toRtr(qp, destQpn, destIpv4, destMac, mtu, rqPsn);
        toRts(qp, sqPsn, timeout);
    }

    /**
     * RESET → INIT → RTR: the responder half of {@link #connect}; a QP left in RTR receives but does
     * not send until {@link #toRts}.
     */
    public static void toRtr(QueuePair qp, int destQpn, int destIpv4, long destMac, Mtu mtu, int rqPsn) {
        QpAttr attr = new QpAttr();
        attr.qpState = QpState.INIT;
        attr.pkeyIndex = 0;
        attr.portNum = 1;
        attr.qpAccessFlags = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;
        qp.modify(attr, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        attr.qpState = QpState.RTR;
        attr.ahAttr = AhAttr.of(destIpv4, destMac);
        attr.pathMtu = mtu;
        attr.destQpNum = destQpn;
        attr.rqPsn = rqPsn;
        attr.maxDestRdAtomic = 16;
        attr.minRnrTimer = 1;
        qp.modify(
                attr,
                QpAttrMask.STATE
                        | QpAttrMask.AV
                        | QpAttrMask.PATH_MTU
                        | QpAttrMask.DEST_QPN
                        | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC
                        | QpAttrMask.MIN_RNR_TIMER);
    }

    /** RTR → RTS: the requester half of {@link #connect}. */
    public static void toRts(QueuePair qp, int sqPsn, int timeout) {
        QpAttr attr = new QpAttr();
        attr.qpState = QpState.RTS;
        attr.timeout = timeout;
        attr.retryCnt = 7;
        attr.rnrRetry = 7;
        attr.sqPsn = sqPsn;
        attr.maxRdAtomic = 16;
        qp.modify(
                attr,
                QpAttrMask.STATE
                        | QpAttrMask.TIMEOUT
                        | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY
                        | QpAttrMask.SQ_PSN
                        | QpAttrMask.MAX_QP_RD_ATOMIC);
    }
}
