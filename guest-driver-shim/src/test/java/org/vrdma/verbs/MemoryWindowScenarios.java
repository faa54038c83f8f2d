package org.vrdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcFlags;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * Memory windows through the Java verbs API, the same checks on an embedded host ({@code
 * MemoryWindowApiTest}) and attached to a vNIC ({@code AttachedWindowsAndSrqTest}): A uses the rkeys
 * of windows B binds over its buffer.
 */
public final class MemoryWindowScenarios {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BYTES = 64 << 10;
    private static final long WIN_OFF = 16384;
    private static final int WIN_LEN = 8192;
    private static final int ACCESS =
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.MW_BIND;

    private MemoryWindowScenarios() {}

    /** One application: context, PD, channel, CQ, a registered buffer that windows can be bound to. */
    private static final class Side implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx;
        final IbvPd pd;
        final IbvCompChannel channel;
        final IbvCq cq;
        final IbvMr mr;

        Side(IbvDevice device) {
            ctx = device.open();
            pd = ctx.allocPd();
            channel = ctx.createCompChannel();
            cq = ctx.createCq(64, channel);
            mr = pd.regMr(ctx.allocBuffer(BYTES, arena), ACCESS);
        }

        MemorySegment buf() {
            return mr.segment();
        }

        final java.util.List<AutoCloseable> children = new java.util.ArrayList<>();

        IbvQp qp() {
            IbvQp q = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 16));
            children.add(q);
            return q;
        }

        IbvMw mw(int type) {
            IbvMw w = pd.allocMw(type);
            children.add(w);
            return w;
        }

        IbvMr region(long offset, int bytes, int access) {
            IbvMr m = pd.regMr(buf().asSlice(offset, bytes), access);
            children.add(m);
            return m;
        }

        @Override
        public void close() {
            try {
                for (AutoCloseable c : children) { // QPs, windows (unbinding them), regions
                    c.close();
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            mr.close();
            cq.close();
            channel.close();
            pd.close();
            ctx.close();
            arena.close();
        }
    }

    private static IbvQp[] connect(Side a, Side b) {
        IbvQp qa = a.qp();
        IbvQp qb = b.qp();
        QpInfo ia = QpInfo.of(qa, a.mr);
        QpInfo ib = QpInfo.of(qb, b.mr);
        QpConnector.rcToRts(qa, ia, ib, 16);
        QpConnector.rcToRts(qb, ib, ia, 16);
        return new IbvQp[] {qa, qb};
    }

    private static IbvWc await(Side s) {
        IbvWc[] wcs = IbvWc.array(1);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (s.cq.poll(wcs) == 1) {
                return wcs[0];
            }
            s.cq.reqNotify(false);
            if (s.cq.poll(wcs) == 1) {
                return wcs[0];
            }
            IbvCq ev = s.channel.getCqEvent(Duration.ofMillis(500));
            if (ev != null) {
                ev.ackEvents(1);
            }
        }
        throw new AssertionError("no completion within " + WAIT);
    }

    /** A's RDMA op of {@code len} bytes at its buffer's start against B's window offset {@code off}. */
    private static WcStatus rdma(Side a, IbvQp qa, WrOpcode op, Side b, long off, int len, int rkey) {
        IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, len);
        w.wrId = 7;
        w.opcode = op;
        w.sendFlags = SendFlags.SIGNALED;
        w.remoteAddr = b.mr.addr() + WIN_OFF + off;
        w.rkey = rkey;
        qa.postSend(w);
        return await(a).status;
    }

    private static IbvSendWr bind2(IbvMw mw, Side b, int access) {
        IbvSendWr w = new IbvSendWr(1);
        w.wrId = 50;
        w.opcode = WrOpcode.BIND_MW;
        w.sendFlags = SendFlags.SIGNALED;
        w.mw = mw;
        w.rkey = mw.nextRkey();
        w.bindMr = b.mr;
        w.bindAddr = b.mr.addr() + WIN_OFF;
        w.bindLength = WIN_LEN;
        w.bindAccess = access;
        return w;
    }

    /** Type 2 binds, access through the window, SEND with Invalidate and LOCAL_INV. */
    public static void type2(IbvDevice da, IbvDevice db) {
        try (Side a = new Side(da);
                Side b = new Side(db)) {
            assertThat(b.ctx.queryDevice().maxMw()).isPositive();
            IbvQp[] p = connect(a, b);
            IbvMw mw = b.mw(IbvMw.TYPE_2);
            assertThat(mw.type()).isEqualTo(IbvMw.TYPE_2);
            int initial = mw.rkey();
            p[1].postSend(bind2(mw, b, AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ));
            assertThat(mw.rkey()).isEqualTo(IbvMw.incRkey(initial));
            IbvWc bound = await(b);
            assertThat(bound.opcode).isEqualTo(WcOpcode.BIND_MW);
            assertThat(bound.status).isEqualTo(WcStatus.SUCCESS);
            int rkey = mw.rkey();

            for (int i = 0; i < 64; i++) {
                a.buf().set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
            }
            assertThat(rdma(a, p[0], WrOpcode.RDMA_WRITE, b, 100, 64, rkey)).isEqualTo(WcStatus.SUCCESS);
            assertThat(b.buf().asSlice(WIN_OFF + 100, 64).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(a.buf().asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE));
            assertThat(rdma(a, p[0], WrOpcode.RDMA_WRITE, b, WIN_LEN - 63, 64, rkey))
                    .as("one byte beyond the window")
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(b.buf().get(ValueLayout.JAVA_BYTE, WIN_OFF + WIN_LEN)).isZero();
            assertThatThrownBy(b.mr::dereg).as("bound region").isInstanceOf(IbvBusyException.class);

            // Remote invalidation on a fresh pair: B's receive says which rkey it invalidated.
            IbvMw mw2 = b.mw(IbvMw.TYPE_2);
            IbvQp[] q = connect(a, b);
            q[1].postSend(bind2(mw2, b, AccessFlags.REMOTE_WRITE));
            assertThat(await(b).status).isEqualTo(WcStatus.SUCCESS);
            int rkey2 = mw2.rkey();
            assertThat(rdma(a, q[0], WrOpcode.RDMA_WRITE, b, 0, 8, rkey2)).isEqualTo(WcStatus.SUCCESS);
            IbvRecvWr r = new IbvRecvWr(1).addSge(b.mr, 2048, 1024);
            r.wrId = 60;
            q[1].postRecv(r);
            IbvSendWr s = new IbvSendWr(1).addSge(a.mr, 0, 100);
            s.wrId = 61;
            s.opcode = WrOpcode.SEND_WITH_INV;
            s.sendFlags = SendFlags.SIGNALED;
            s.invalidateRkey = rkey2;
            q[0].postSend(s);
            assertThat(await(a).status).isEqualTo(WcStatus.SUCCESS);
            IbvWc got = await(b);
            assertThat(got.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.opcode).isEqualTo(WcOpcode.RECV);
            assertThat(got.byteLen).isEqualTo(100);
            assertThat(got.wcFlags).isEqualTo(WcFlags.WITH_INV);
            assertThat(got.immData).as("invalidated rkey").isEqualTo(rkey2);
            assertThat(rdma(a, q[0], WrOpcode.RDMA_WRITE, b, 0, 8, rkey2)).isEqualTo(WcStatus.REM_ACCESS_ERR);

            // Bound again on another pair, then invalidated locally.
            IbvQp[] t = connect(a, b);
            t[1].postSend(bind2(mw2, b, AccessFlags.REMOTE_WRITE));
            assertThat(await(b).status).isEqualTo(WcStatus.SUCCESS);
            int rkey3 = mw2.rkey();
            assertThat(rkey3).isNotEqualTo(rkey2);
            assertThat(rdma(a, t[0], WrOpcode.RDMA_WRITE, b, 0, 8, rkey3)).isEqualTo(WcStatus.SUCCESS);
            IbvSendWr inv = new IbvSendWr(1);
            inv.wrId = 62;
            inv.opcode = WrOpcode.LOCAL_INV;
            inv.sendFlags = SendFlags.SIGNALED;
            inv.invalidateRkey = rkey3;
            t[1].postSend(inv);
            IbvWc done = await(b);
            assertThat(done.opcode).isEqualTo(WcOpcode.LOCAL_INV);
            assertThat(done.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(rdma(a, t[0], WrOpcode.RDMA_WRITE, b, 0, 8, rkey3)).isEqualTo(WcStatus.REM_ACCESS_ERR);
            mw.dealloc();
            mw2.dealloc();
            assertThatThrownBy(mw::dealloc).isInstanceOf(IbvInvalidArgumentException.class);
            b.mr.dereg(); // no window bound any more
        }
    }

    /** Type 1 binds through {@code bindMw}, in send-queue order, and the errors of both types. */
    public static void type1AndErrors(IbvDevice da, IbvDevice db) {
        try (Side a = new Side(da);
                Side b = new Side(db)) {
            IbvQp[] p = connect(a, b);
            IbvMw mw = b.mw(IbvMw.TYPE_1);
            int before = mw.rkey();
            IbvRecvWr r = new IbvRecvWr(1).addSge(a.mr, 2048, 4096);
            r.wrId = 79;
            p[0].postRecv(r);
            IbvSendWr s = new IbvSendWr(1).addSge(b.mr, 4096, 2000);
            s.wrId = 80;
            s.opcode = WrOpcode.SEND;
            s.sendFlags = SendFlags.SIGNALED;
            p[1].postSend(s);
            int key = p[1].bindMw(
                    mw, 81, SendFlags.SIGNALED, b.mr, b.mr.addr() + WIN_OFF, WIN_LEN, AccessFlags.REMOTE_WRITE);
            assertThat(key).isEqualTo(IbvMw.incRkey(before)).isEqualTo(mw.rkey());
            IbvWc first = await(b);
            IbvWc second = await(b);
            assertThat(first.wrId).isEqualTo(80);
            assertThat(first.opcode).isEqualTo(WcOpcode.SEND);
            assertThat(second.wrId).isEqualTo(81);
            assertThat(second.opcode).isEqualTo(WcOpcode.BIND_MW);
            assertThat(second.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(await(a).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(rdma(a, p[0], WrOpcode.RDMA_WRITE, b, 8, 8, key)).isEqualTo(WcStatus.SUCCESS);
            // Bound to no region: the window grants nothing under its next key.
            int next = p[1].bindMw(mw, 82, SendFlags.SIGNALED, null, 0, 0, 0);
            assertThat(next).isEqualTo(IbvMw.incRkey(key));
            assertThat(await(b).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(rdma(a, p[0], WrOpcode.RDMA_WRITE, b, 8, 8, key)).isEqualTo(WcStatus.REM_ACCESS_ERR);

            // Errors: the type, the call, the domain; a region without MW_BIND fails at execution.
            assertThatThrownBy(() -> b.pd.allocMw(3)).isInstanceOf(IbvInvalidArgumentException.class);
            IbvMw t2 = b.mw(IbvMw.TYPE_2);
            IbvQp[] q = connect(a, b);
            assertThatThrownBy(() -> q[1].bindMw(t2, 1, 0, b.mr, b.mr.addr(), 8, AccessFlags.REMOTE_READ))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> q[1].postSend(bind2(mw, b, AccessFlags.REMOTE_READ)))
                    .as("type 1 through BIND_MW")
                    .isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> q[0].bindMw(mw, 1, 0, null, 0, 0, 0))
                    .as("A's QP, B's window")
                    .isInstanceOf(IbvInvalidArgumentException.class);
            IbvMr plain = b.region(32768, 4096, AccessFlags.LOCAL_WRITE);
            q[1].bindMw(mw, 83, SendFlags.SIGNALED, plain, plain.addr(), 64, AccessFlags.REMOTE_READ);
            IbvWc bad = await(b);
            assertThat(bad.wrId).isEqualTo(83);
            assertThat(bad.status).isEqualTo(WcStatus.MW_BIND_ERR);
            t2.dealloc();
            mw.dealloc();
            plain.dereg();
        }
    }
}
