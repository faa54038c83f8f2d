package org.vrdma.verbs;

import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.QpAttr;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;

/**
 * Queue pair attributes ({@code struct ibv_qp_attr}); {@link IbvQp#modify} reads only the fields
 * named by the {@link QpAttrMask} bits it is given, and accepts exactly the transitions and masks of
 * the InfiniBand specification, as libibverbs and the kernel do.
 */
public final class IbvQpAttr {
    /** The state to move to. */
    public QpState qpState = QpState.RESET;
    /** The state the caller believes the QP is in (with {@link QpAttrMask#CUR_STATE}). */
    public QpState curQpState = QpState.RESET;
    /** Path MTU (RC, at RTR). */
    public Mtu pathMtu = Mtu.MTU_1024;
    /** Q_Key (UD). */
    public int qkey;
    /** Expected PSN of the responder (24 bits). */
    public int rqPsn;
    /** First PSN of the requester (24 bits). */
    public int sqPsn;
    /** The peer's QP number (RC). */
    public int destQpNum;
    /** Remote operations allowed: {@link org.vrdma.vnic.verbs.AccessFlags} REMOTE_* bits. */
    public int qpAccessFlags;
    /** The peer's address (RC, at RTR). */
    public IbvAhAttr ahAttr;
    /** P_Key index (0). */
    public int pkeyIndex;
    /** Raise SQ_DRAINED when entering SQD. */
    public boolean enSqdAsyncNotify;
    /** Query result: SQD and still draining. */
    public boolean sqDraining;
    /** Outstanding READ/atomic requests this QP initiates. */
    public int maxRdAtomic;
    /** Outstanding READ/atomic requests this QP accepts. */
    public int maxDestRdAtomic;
    /** RNR NAK timer code (0..31). */
    public int minRnrTimer;
    /** Port, 1. */
    public int portNum = 1;
    /** Local ACK timeout code: 4.096 µs · 2^timeout (0..31, 0 = infinite). */
    public int timeout;
    /** Retries after timeouts before RETRY_EXC_ERR (0..7). */
    public int retryCnt;
    /** Retries after RNR NAKs (0..7, 7 = infinite). */
    public int rnrRetry;
    /** Query result: outstanding send requests. */
    public int maxSendWr;
    /** Query result: outstanding receive requests. */
    public int maxRecvWr;
    /** Query result: send scatter/gather elements. */
    public int maxSendSge;
    /** Query result: receive scatter elements. */
    public int maxRecvSge;
    /** Query result: inline bytes. */
    public int maxInlineData;

    QpAttr toModel(int mask) {
        QpAttr m = new QpAttr();
        m.qpState = qpState;
        m.curQpState = curQpState;
        m.pathMtu = pathMtu;
        m.qkey = qkey;
        m.rqPsn = rqPsn;
        m.sqPsn = sqPsn;
        m.destQpNum = destQpNum;
        m.qpAccessFlags = qpAccessFlags;
        if ((mask & QpAttrMask.AV) != 0) {
            if (ahAttr == null) {
                throw new IbvInvalidArgumentException("AV in the mask but no ah_attr");
            }
            m.ahAttr = ahAttr.toModel();
        }
        m.pkeyIndex = pkeyIndex;
        m.enSqdAsyncNotify = enSqdAsyncNotify;
        m.maxRdAtomic = maxRdAtomic;
        m.maxDestRdAtomic = maxDestRdAtomic;
        m.minRnrTimer = minRnrTimer;
        m.portNum = portNum;
        m.timeout = timeout;
        m.retryCnt = retryCnt;
        m.rnrRetry = rnrRetry;
        return m;
    }

    static IbvQpAttr fromModel(QpAttr m) {
        IbvQpAttr a = new IbvQpAttr();
        a.qpState = m.qpState;
        a.curQpState = m.curQpState;
        a.pathMtu = m.pathMtu;
        a.qkey = m.qkey;
        a.rqPsn = m.rqPsn;
        a.sqPsn = m.sqPsn;
        a.destQpNum = m.destQpNum;
        a.qpAccessFlags = m.qpAccessFlags;
        a.ahAttr = IbvAhAttr.fromModel(m.ahAttr);
        a.pkeyIndex = m.pkeyIndex;
        a.enSqdAsyncNotify = m.enSqdAsyncNotify;
        a.sqDraining = m.sqDraining;
        a.maxRdAtomic = m.maxRdAtomic;
        a.maxDestRdAtomic = m.maxDestRdAtomic;
        a.minRnrTimer = m.minRnrTimer;
        a.portNum = m.portNum;
        a.timeout = m.timeout;
        a.retryCnt = m.retryCnt;
        a.rnrRetry = m.rnrRetry;
        if (m.cap != null) {
            a.maxSendWr = m.cap.maxSendWr;
            a.maxRecvWr = m.cap.maxRecvWr;
            a.maxSendSge = m.cap.maxSendSge;
            a.maxRecvSge = m.cap.maxRecvSge;
            a.maxInlineData = m.cap.maxInlineData;
        }
        return a;
    }
}
