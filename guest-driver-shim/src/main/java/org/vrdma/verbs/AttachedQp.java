package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.lang.invoke.VarHandle;
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
    private final long rqBase;
    // Written by the one posting thread of each queue.
    private int sqProd;
    private int rqProd;

    private AttachedQp(int handle, SharedRing ring, QpRing layout, int maxSendSge, boolean sigAll) {
        this.handle = handle;
        this.ring = ring;
        this.layout = layout;
        this.maxSendSge = maxSendSge;
        this.sigAll = sigAll;
        this.rqBase = QP_RING_HDR + (long) layout.sqEntries() * layout.sqStride();
    }

    /** CREATE_QP with a work-queue ring; {@code attr} gets the sizes granted. */
    static IbvQp create(IbvContext ctx, IbvPd pd, IbvQpInitAttr attr) {
        var a = ctx.queryDevice();
        if (attr.maxSendWr < 1
                || attr.maxSendWr > a.maxQpWr()
                || attr.maxRecvWr < 1
                || attr.maxRecvWr > a.maxQpWr()
                || attr.maxSendSge < 1
                || attr.maxSendSge > a.maxSge()
                || attr.maxRecvSge < 1
                || attr.maxRecvSge > a.maxSge()
                || attr.maxInlineData < 0
                || attr.maxInlineData > a.maxInlineData()) {
            throw new IbvInvalidArgumentException("queue pair capabilities beyond the device's limits");
        }
        ctx.attached.openDoorbell();
        QpRing layout = QpRing.of(attr.maxSendWr, attr.maxRecvWr, attr.maxSendSge, attr.maxRecvSge, attr.maxInlineData);
        SharedRing ring = AttachedCq.ring("vrdma-qp", layout.bytes());
        ByteBuffer req = VnicClient.body(56);
        req.putInt(pd.handle)
                .putInt(attr.sendCq.attached.handle)
                .putInt(attr.recvCq.attached.handle)
                .putInt(0)
                .putInt(attr.qpType == org.vrdma.vnic.verbs.QpType.UC ? QPT_UC : QPT_RC)
                .putInt(attr.sqSigAll ? 1 : 0);
        req.putInt(attr.maxSendWr)
                .putInt(attr.maxRecvWr)
                .putInt(attr.maxSendSge)
                .putInt(attr.maxRecvSge)
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
        AttachedQp q = new AttachedQp(handle, ring, layout, attr.maxSendSge, attr.sqSigAll);
        return new IbvQp(ctx, pd, qpNum, attr, q);
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
        ring.putLong(at + 56, 0); // ah, remote_qpn: RC
        ring.putLong(at + 64, 0); // remote_qkey, reserved
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
                putSge(at + SQ_WQE_BYTES + (long) i * SGE_BYTES, wr, i);
            }
        }
        ring.setIntRelease(SQ_PROD, ++sqProd);
        doorbell(ctx);
    }

    /** Posting thread: {@code wr} was validated by {@link IbvQp}. */
    void postRecv(IbvContext ctx, IbvRecvWr wr) {
        int cons = ring.getIntAcquire(RQ_CONS);
        if (rqProd - cons >= layout.rqEntries()) {
            throw new IbvNoMemoryException(
                    org.vrdma.vnic.verbs.Errno.ENOMEM, "receive queue full (" + layout.rqEntries() + ")");
        }
        long at = rqBase + (long) (rqProd & (layout.rqEntries() - 1)) * layout.rqStride();
        ring.putLong(at, wr.wrId);
        ring.putInt(at + 8, wr.numSge());
        ring.putInt(at + 12, 0);
        for (int i = 0; i < wr.numSge(); i++) {
            putSge(at + RQ_WQE_BYTES + (long) i * SGE_BYTES, wr, i);
        }
        ring.setIntRelease(RQ_PROD, ++rqProd);
        doorbell(ctx);
    }

    private void putSge(long at, SgeWorkRequest<?> wr, int i) {
        ring.putLong(at, wr.sgeAddr(i));
        ring.putInt(at + 8, wr.sgeLength(i));
        ring.putInt(at + 12, wr.sgeLkey(i));
    }

    /** After publishing: wake the vNIC only if it armed the doorbell before sleeping. */
    private void doorbell(IbvContext ctx) {
        VarHandle.fullFence();
        if (ring.getInt(DB_ARMED) != 0 && ring.getAndSetInt(DB_ARMED, 0) != 0) {
            ctx.attached.ringDoorbell();
        }
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
