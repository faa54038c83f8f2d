package org.vrdma.vnic.verbs;

/**
 * Queue pair attributes ({@code struct ibv_qp_attr}); {@link QueuePair#modify} reads only the fields
 * named by the {@link QpAttrMask} bits it is given.
 */
public final class QpAttr {
    public QpState qpState = QpState.RESET;
    public QpState curQpState = QpState.RESET;
    public Mtu pathMtu = Mtu.MTU_1024;
    /** Q_Key (UD); a send work request with the high bit set in its qkey uses this one. */
    public int qkey;
    /** Expected PSN of the responder (24 bits). */
    public int rqPsn;
    /** First PSN of the requester (24 bits). */
    public int sqPsn;

    public int destQpNum;
    /** Remote operations the responder allows: {@link AccessFlags} REMOTE_* bits. */
    public int qpAccessFlags;

    public QpCap cap;
    public AhAttr ahAttr;
    public int pkeyIndex;
    public boolean enSqdAsyncNotify;
    public boolean sqDraining;
    /** Outstanding RDMA READ/atomic requests this QP may initiate. */
    public int maxRdAtomic;
    /** Outstanding RDMA READ/atomic requests this QP accepts as responder. */
    public int maxDestRdAtomic;
    /** RNR NAK timer code (0..31) this QP advertises as responder. */
    public int minRnrTimer;

    public int portNum = 1;
    /** Local ACK timeout code: 4.096 µs · 2^timeout, 0 = infinite (0..31). */
    public int timeout;
    /** Retransmissions after a timeout before RETRY_EXC_ERR (0..7). */
    public int retryCnt;
    /** Retries after RNR NAKs (0..7, 7 = infinite). */
    public int rnrRetry;

    /** Copy. */
    public QpAttr copy() {
        final QpAttr c = new QpAttr();
        c.qpState = qpState;
        c.curQpState = curQpState;
        c.pathMtu = pathMtu;
        c.qkey = qkey;
        c.rqPsn = rqPsn;
        c.sqPsn = sqPsn;
        c.destQpNum = destQpNum;
        c.qpAccessFlags = qpAccessFlags;
        c.cap = cap == null ? null : cap.copy();
        c.ahAttr = ahAttr;
        c.pkeyIndex = pkeyIndex;
        c.enSqdAsyncNotify = enSqdAsyncNotify;
        c.sqDraining = sqDraining;
        c.maxRdAtomic = maxRdAtomic;
        c.maxDestRdAtomic = maxDestRdAtomic;
        c.minRnrTimer = minRnrTimer;
        c.portNum = portNum;
        c.timeout = timeout;
        c.retryCnt = retryCnt;
        c.rnrRetry = rnrRetry;
        return c;
    }
}
