package org.vrdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.time.Duration;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * {@code ibv_modify_srq} resizing and {@code ibv_query_srq} through the Java verbs API, the same
 * checks on an embedded host and attached to a vNIC (where growing past the ring's slots moves the
 * queue to a new ring): B's RC QP takes A's SENDs from the SRQ.
 */
public final class SrqResizeScenario {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private SrqResizeScenario() {}

    private static IbvWc next(IbvCq cq) {
        IbvWc[] wcs = IbvWc.array(1);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within " + WAIT);
    }

    public static void run(IbvDevice da, IbvDevice db) {
        int access = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;
        try (Arena arena = Arena.ofShared();
                IbvContext ca = da.open();
                IbvContext cb = db.open();
                IbvPd pa = ca.allocPd();
                IbvPd pb = cb.allocPd();
                IbvCq qa = ca.createCq(64, null);
                IbvCq qb = cb.createCq(64, null);
                IbvMr ma = pa.regMr(ca.allocBuffer(1 << 16, arena), access);
                IbvMr mb = pb.regMr(cb.allocBuffer(1 << 16, arena), access);
                IbvSrq srq = cb.createSrq(pb, 4, 1, 0)) {
            int posted = 0;
            for (; posted < 4; posted++) {
                IbvRecvWr r = new IbvRecvWr(1).addSge(mb, 256L * posted, 256);
                r.wrId = 100 + posted;
                srq.postRecv(r);
            }
            assertThatThrownBy(() -> srq.postRecv(new IbvRecvWr(1).addSge(mb, 0, 8)))
                    .isInstanceOf(IbvNoMemoryException.class);
            IbvSrqAttr attr = new IbvSrqAttr();
            attr.maxWr = 3;
            assertThatThrownBy(() -> srq.modify(attr, IbvSrqAttr.MAX_WR))
                    .as("below the receives posted")
                    .isInstanceOf(IbvInvalidArgumentException.class);
            attr.maxWr = 40;
            attr.srqLimit = 41;
            assertThatThrownBy(() -> srq.modify(attr, IbvSrqAttr.MAX_WR | IbvSrqAttr.LIMIT))
                    .as("limit above the new size")
                    .isInstanceOf(IbvInvalidArgumentException.class);
            assertThat(srq.query().maxWr).as("unchanged").isEqualTo(4);
            attr.srqLimit = 5;
            srq.modify(attr, IbvSrqAttr.MAX_WR | IbvSrqAttr.LIMIT);
            IbvSrqAttr q = srq.query();
            assertThat(q.maxWr).isEqualTo(40);
            assertThat(q.maxSge).isEqualTo(1);
            assertThat(q.srqLimit).isEqualTo(5);
            assertThat(srq.maxWr()).isEqualTo(40);
            for (; posted < 40; posted++) {
                IbvRecvWr r = new IbvRecvWr(1).addSge(mb, 256L * (posted % 64), 256);
                r.wrId = 100 + posted;
                srq.postRecv(r);
            }
            assertThatThrownBy(() -> srq.postRecv(new IbvRecvWr(1).addSge(mb, 0, 8)))
                    .isInstanceOf(IbvNoMemoryException.class);

            // Receives posted before and after the resize are taken in posting order.
            try (IbvQp a = ca.createQp(pa, IbvQpInitAttr.rc(qa, 16));
                    IbvQp b = cb.createQp(pb, withSrq(IbvQpInitAttr.rc(qb, 16), srq))) {
                QpInfo ia = QpInfo.of(a, ma);
                QpInfo ib = QpInfo.of(b, mb);
                QpConnector.rcToRts(a, ia, ib, 16);
                QpConnector.rcToRts(b, ib, ia, 16);
                for (int i = 0; i < 6; i++) {
                    IbvSendWr s = new IbvSendWr(1).addSge(ma, 0, 10);
                    s.wrId = i;
                    s.opcode = WrOpcode.SEND;
                    s.sendFlags = SendFlags.SIGNALED;
                    a.postSend(s);
                    assertThat(next(qa).status).isEqualTo(WcStatus.SUCCESS);
                    IbvWc got = next(qb);
                    assertThat(got.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(got.wrId).isEqualTo(100 + i);
                }
                // Shrink to exactly the 34 still posted: full again.
                attr.maxWr = 34;
                srq.modify(attr, IbvSrqAttr.MAX_WR);
                assertThat(srq.query().maxWr).isEqualTo(34);
                assertThatThrownBy(() -> srq.postRecv(new IbvRecvWr(1).addSge(mb, 0, 8)))
                        .isInstanceOf(IbvNoMemoryException.class);
                attr.maxWr = 0;
                assertThatThrownBy(() -> srq.modify(attr, IbvSrqAttr.MAX_WR))
                        .isInstanceOf(IbvInvalidArgumentException.class);
                assertThatThrownBy(() -> srq.modify(attr, 1 << 5)).isInstanceOf(IbvInvalidArgumentException.class);
            }
        }
    }

    private static IbvQpInitAttr withSrq(IbvQpInitAttr a, IbvSrq srq) {
        a.srq = srq;
        a.maxRecvWr = 0;
        a.maxRecvSge = 0;
        return a;
    }
}
