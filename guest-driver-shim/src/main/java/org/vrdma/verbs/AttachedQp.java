package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.nio.ByteBuffer;
import org.vrdma.shim.ControlProtocol.QpRing;
import org.vrdma.shim.SharedRing;
import org.vrdma.shim.VnicClient;
import org.vrdma.vnic.verbs.QpAttr;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.SendFlags;

/**
 * The work-queue rings of a QP in a vNIC process: a sealed memfd this JVM creates and the vNIC maps.
 * Posting writes the next slot (inline payload copied now), publishes the producer counter with a
 * release store and rings the doorbell only if the vNIC armed it before it went to sleep, as the
 * native library does; a busy vNIC gets no system call from the application.
 */
final class AttachedQp {
    final int handle;
    private final SharedRing ring;
    private final QpRing layout;
    private final int maxSendSge;
    private final boolean sigAll;
    private final boolean ud;
    /** The QP's own receive queue; null on a shared receive queue. */
    private final AttachedRecvQueue rq;
    // Written by the one posting thread of the send queue.
    private int sqProd;

    private AttachedQp(int handle, SharedRing ring, QpRing layout, int maxSendSge, boolean sigAll, boolean ud) {
        this.handle = handle;
        this.ring = ring;
        this.layout = layout;
        this.maxSendSge = maxSendSge;
        this.sigAll = sigAll;
        this.ud = ud;
        this.rq = layout.rqEntries() == 0
                ? null
                : new AttachedRecvQueue(
                        ring,
                        QP_RING_HDR + (long) layout.sqEntries() * layout.sqStride(),
                        layout.rqEntries(),
                        layout.rqStride(),
                        layout.rqEntries(),
                        RQ_PROD,
                        RQ_CONS,
                        "receive queue");
    }

    /** CREATE_QP with a work-queue ring; {@code attr} gets the sizes granted. */
    static IbvQp create(IbvContext ctx, IbvPd pd, IbvQpInitAttr attr) {
        var a = ctx.queryDevice();
        // On a shared receive queue the QP has no receive queue of its own (0 slots in its ring).
        boolean onSrq = attr.srq != null;
        if (attr.maxSendWr < 1
                || attr.maxSendWr > a.maxQpWr()
                || (!onSrq && (attr.maxRecvWr < 1 || attr.maxRecvWr > a.maxQpWr()))
                || attr.maxSendSge < 1
                || attr.maxSendSge > a.maxSge()
                || (!onSrq && (attr.maxRecvSge < 1 || attr.maxRecvSge > a.maxSge()))
                || attr.maxInlineData < 0
                || attr.maxInlineData > a.maxInlineData()) {
            throw new IbvInvalidArgumentException("queue pair capabilities beyond the device's limits");
        }
        ctx.attached.openDoorbell();
        int maxRecvWr = onSrq ? 0 : attr.maxRecvWr;
        int maxRecvSge = onSrq ? 0 : attr.maxRecvSge;
        QpRing layout = QpRing.of(attr.maxSendWr, maxRecvWr, attr.maxSendSge, maxRecvSge, attr.maxInlineData);
        SharedRing ring = AttachedCq.ring("vrdma-qp", layout.bytes());
        ByteBuffer req = VnicClient.body(56);
        req.putInt(pd.handle)
                .putInt(attr.sendCq.attached.handle)
                .putInt(attr.recvCq.attached.handle)
                .putInt(onSrq ? attr.srq.attached.handle : 0)
                .putInt(wireType(attr.qpType))
                .putInt(attr.sqSigAll ? 1 : 0);
        req.putInt(attr.maxSendWr)
                .putInt(maxRecvWr)
                .putInt(attr.maxSendSge)
                .putInt(maxRecvSge)
                .putInt(attr.maxInlineData);
        req.putInt(ring.fd()).putInt((int) ring.bytes()).putInt(0);
        ByteBuffer r = ctx.attached.callWithRing(CREATE_QP, req, ring);
        int handle = r.getInt();
        int qpNum = r.getInt();
        attr.maxSendWr = r.getInt();
        attr.maxRecvWr = r.getInt();
        attr.maxSendSge = r.getInt();
        attr.maxRecvSge = r.getInt();
        attr.maxInlineData = r.getInt();
        AttachedQp q = new AttachedQp(
                handle, ring, layout, attr.maxSendSge, attr.sqSigAll, attr.qpType == org.vrdma.vnic.verbs.QpType.UD);
        return new IbvQp(ctx, pd, qpNum, attr, q);
    }

    private static int wireType(org.vrdma.vnic.verbs.QpType t) {
        return switch (t) {
            case UD -> QPT_UD;
            case UC -> QPT_UC;
            default -> QPT_RC;
        };
    }

    /** Posting thread: {@code wr} was validated by {@link IbvQp}. */
    void postSend(IbvContext ctx, IbvSendWr wr, long total) {
        int cons = ring.getIntAcquire(SQ_CONS);
        if (sqProd - cons >= layout.sqEntries()) {
            throw new IbvNoMemoryException(
                    org.vrdma.vnic.verbs.Errno.ENOMEM, "send queue full (" + layout.sqEntries() + ")");
        }
        long at = QP_RING_HDR + (long) (sqProd & (layout.sqEntries() - 1)) * layout.sqStride();
        int flags = wr.sendFlags | (sigAll ? SendFlags.SIGNALED : 0);
        ring.putLong(at, wr.wrId);
        ring.putInt(at + 8, wr.opcode.ordinal()); // enum ibv_wr_opcode
        ring.putInt(at + 12, flags);
        ring.putInt(at + 20, wr.immData);
        ring.putLong(at + 24, wr.remoteAddr);
        ring.putInt(at + 32, wr.rkey);
        ring.putLong(at + 40, wr.compareAdd);
        ring.putLong(at + 48, wr.swap);
        if (wr.opcode == org.vrdma.vnic.verbs.WrOpcode.LOCAL_INV
                || wr.opcode == org.vrdma.vnic.verbs.WrOpcode.SEND_WITH_INV) {
            ring.putInt(at + 20, wr.invalidateRkey); // shares the slot with imm_data
        }
        if (wr.opcode == org.vrdma.vnic.verbs.WrOpcode.BIND_MW) {
            // As vrdma_proto.h: addr, length, new rkey, window, region handles and access flags.
            ring.putLong(at + 24, wr.bindAddr);
            ring.putLong(at + 40, wr.bindLength);
            ring.putInt(at + 56, wr.mw.handle);
            ring.putInt(at + 60, wr.bindMr == null ? 0 : wr.bindMr.handle);
            ring.putInt(at + 64, wr.bindAccess);
            ring.putInt(at + 68, 0);
        } else if (ud) {
            // The vNIC resolves the handle among this context's own address handles only.
            ring.putInt(at + 56, wr.ah.handle);
            ring.putInt(at + 60, wr.remoteQpn);
            ring.putInt(at + 64, wr.remoteQkey);
            ring.putInt(at + 68, 0);
        } else {
            ring.putLong(at + 56, 0); // ah, remote_qpn
            ring.putLong(at + 64, 0); // remote_qkey, reserved
        }
        if ((flags & SendFlags.INLINE) != 0) {
            long dst = at + SQ_WQE_BYTES + (long) maxSendSge * SGE_BYTES;
            for (int i = 0; i < wr.numSge(); i++) {
                int len = wr.sgeLength(i);
                IbvMr mr = ctx.mrByIndex.get(wr.sgeLkey(i) >>> 8);
                if (mr == null || mr.lkey() != wr.sgeLkey(i) || !mr.contains(wr.sgeAddr(i), len)) {
                    throw new IbvInvalidArgumentException("inline sge " + i + " is not inside a registered region");
                }
                try {
                    ring.putBytes(dst, mr.segment(), wr.sgeAddr(i) - mr.addr(), len);
                } catch (IllegalStateException e) {
                    throw new IbvFaultException("inline source no longer accessible: " + e.getMessage());
                }
                dst += len;
            }
            ring.putInt(at + 16, 0);
            ring.putInt(at + 36, (int) total);
        } else {
            ring.putInt(at + 16, wr.numSge());
            ring.putInt(at + 36, 0);
            for (int i = 0; i < wr.numSge(); i++) {
                AttachedRecvQueue.putSge(ring, at + SQ_WQE_BYTES + (long) i * SGE_BYTES, wr, i);
            }
        }
        ring.setIntRelease(SQ_PROD, ++sqProd);
        AttachedRecvQueue.doorbell(ctx, ring);
    }

    /** Posting thread: {@code wr} was validated by {@link IbvQp}, which has no SRQ. */
    void postRecv(IbvContext ctx, IbvRecvWr wr) {
        rq.post(ctx, wr);
    }

    /** Send requests in the ring the vNIC has not taken yet. */
    long pendingSends() {
        return sqProd - ring.getIntAcquire(SQ_CONS);
    }

    /** MODIFY_QP with {@code m}, the attributes {@link IbvQpAttr#toModel} validated. */
    void modify(IbvContext ctx, IbvQpAttr attr, QpAttr m, int mask) {
        ByteBuffer b = VnicClient.body(8 + QP_ATTR_BYTES);
        b.putInt(handle).putInt(mask);
        b.putInt(ordinal(m.qpState)).putInt(ordinal(m.curQpState)).putInt(m.pathMtu == null ? 0 : m.pathMtu.code());
        b.putInt(m.qkey).putInt(m.rqPsn).putInt(m.sqPsn).putInt(m.destQpNum).putInt(m.qpAccessFlags);
        b.putInt(m.pkeyIndex).putInt(m.portNum).putInt(m.maxRdAtomic).putInt(m.maxDestRdAtomic);
        b.putInt(m.minRnrTimer).putInt(m.timeout).putInt(m.retryCnt).putInt(m.rnrRetry);
        b.putInt(m.enSqdAsyncNotify ? 1 : 0).putInt(0);
        b.putInt(0).putInt(0).putInt(0).putInt(0).putInt(0); // cap: not modifiable
        IbvAhAttr ah = (mask & QpAttrMask.AV) != 0 ? attr.ahAttr : null;
        b.put(ah == null ? new byte[16] : ah.dgid.raw());
        b.putInt(ah == null ? 0 : 1).putInt(ah == null ? 0 : ah.sgidIndex).putInt(ah == null ? 0 : ah.hopLimit);
        b.putInt(ah == null ? 0 : ah.trafficClass).putInt(0).putInt(0).putInt(ah == null ? 0 : ah.sl);
        b.putInt(ah == null ? 0 : ah.portNum).putInt(0);
        ctx.attached.call(MODIFY_QP, b);
    }

    /** QUERY_QP: the state the vNIC's QP is in now, and its attributes. */
    IbvQpAttr query(IbvContext ctx) {
        ByteBuffer r = AttachedMemory.call(ctx, QUERY_QP, handle, -1);
        IbvQpAttr a = new IbvQpAttr();
        QpState[] states = QpState.values();
        a.qpState = states[Math.floorMod(r.getInt(), states.length)];
        a.curQpState = states[Math.floorMod(r.getInt(), states.length)];
        a.pathMtu = AttachedContext.mtu(r.getInt());
        a.qkey = r.getInt();
        a.rqPsn = r.getInt();
        a.sqPsn = r.getInt();
        a.destQpNum = r.getInt();
        a.qpAccessFlags = r.getInt();
        a.pkeyIndex = r.getInt();
        a.portNum = r.getInt();
        a.maxRdAtomic = r.getInt();
        a.maxDestRdAtomic = r.getInt();
        a.minRnrTimer = r.getInt();
        a.timeout = r.getInt();
        a.retryCnt = r.getInt();
        a.rnrRetry = r.getInt();
        a.enSqdAsyncNotify = r.getInt() != 0;
        a.sqDraining = r.getInt() != 0;
        a.maxSendWr = r.getInt();
        a.maxRecvWr = r.getInt();
        a.maxSendSge = r.getInt();
        a.maxRecvSge = r.getInt();
        a.maxInlineData = r.getInt();
        byte[] dgid = new byte[16];
        r.get(dgid);
        boolean global = r.getInt() != 0;
        r.getInt(); // sgid_index
        int hopLimit = r.getInt();
        int trafficClass = r.getInt();
        r.getInt(); // flow_label
        r.getInt(); // dlid
        int sl = r.getInt();
        int port = r.getInt();
        if (global) {
            IbvAhAttr ah = IbvAhAttr.of(IbvGid.of(dgid));
            ah.hopLimit = hopLimit;
            ah.trafficClass = trafficClass;
            ah.sl = sl;
            ah.portNum = port;
            a.ahAttr = ah;
        }
        return a;
    }

    /** DESTROY_QP, then the ring is unmapped on this side too. */
    void destroy(IbvContext ctx) {
        AttachedMemory.call(ctx, DESTROY_QP, handle);
        ring.close();
    }

    private static int ordinal(Enum<?> e) {
        return e == null ? 0 : e.ordinal();
    }
}
