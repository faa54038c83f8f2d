package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vnic.verbs.Fabric.drain;
import static org.vrdma.vnic.verbs.Fabric.errnoOf;

import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Memory windows in virtual time: type 1 ({@code ibv_bind_mw}) and type 2 ({@code IBV_WR_BIND_MW})
 * binds, rkey checks against the window (range, access, invalidated: remote access NAK and
 * REM_ACCESS_ERR like hardware), local invalidation, SEND with Invalidate, bind errors.
 */
class MemoryWindowTest {
    /** B's region that windows are bound to: 64 KiB at {@link #WBASE}, MW_BIND allowed. */
    private static final long WBASE = 0x2000_0000L;

    private static final int WINDOW_OFFSET = 4096;
    private static final int WINDOW_BYTES = 8192;

    /** Windows, regions and memory a test made beyond the fabric's: released before the fabric closes. */
    private static final class Extras implements AutoCloseable {
        final List<MemoryWindow> windows = new ArrayList<>();
        final List<MemoryRegion> regions = new ArrayList<>();
        final List<ProtectionDomain> pds = new ArrayList<>();

        MemoryWindow mw(final ProtectionDomain pd, final int type) {
            final MemoryWindow w = pd.allocMemoryWindow(type);
            windows.add(w);
            return w;
        }

        MemoryRegion region(final ProtectionDomain pd, final long addr, final int bytes, final int access) {
            final ByteBufMemory m = ByteBufMemory.allocate(PooledByteBufAllocator.DEFAULT, bytes);
            try {
                final MemoryRegion r = pd.registerMemoryRegion(m, addr, access);
                regions.add(r);
                return r;
            } catch (final RuntimeException e) {
                m.release();
                throw e;
            }
        }

        @Override
        public void close() {
            for (final MemoryWindow w : windows) {
                if (w.isAllocated()) {
                    w.deallocate();
                }
            }
            for (final MemoryRegion r : regions) {
                if (r.isRegistered()) {
                    r.deregister();
                }
                ((ByteBufMemory) r.backing()).release();
            }
            for (final ProtectionDomain pd : pds) {
                pd.deallocate();
            }
        }
    }

    private static Fabric fabric() {
        return new Fabric(7, Fabric.fastLink(), TransportConfig.defaults());
    }

    private static QueuePair[] connect(final Fabric f, final RecoveryMode mode) {
        return f.connectRc(mode, new QpCap(16, 16, 4, 4, 64), Mtu.MTU_1024);
    }

    /** A region on B that windows can be bound to (a Fabric host's own region has no MW_BIND). */
    private static MemoryRegion bindableRegion(final Fabric f, final Extras x, final int access) {
        return x.region(f.b.pd, WBASE, 64 << 10, access);
    }

    private static final int ALL = AccessFlags.LOCAL_WRITE
            | AccessFlags.REMOTE_WRITE
            | AccessFlags.REMOTE_READ
            | AccessFlags.REMOTE_ATOMIC
            | AccessFlags.MW_BIND;

    private static SendWorkRequest bindType2(
            final MemoryWindow mw, final int keyByte, final MemoryRegion mr, final int access) {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = 50;
        wr.opcode = WrOpcode.BIND_MW;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.mw = mw;
        wr.rkey = (mw.rkey() & ~0xFF) | keyByte;
        wr.bindMr = mr;
        wr.bindAddr = WBASE + WINDOW_OFFSET;
        wr.bindLength = WINDOW_BYTES;
        wr.bindAccess = access;
        return wr;
    }

    /** A's RDMA op on B's memory at {@code addr} with {@code rkey}: 64 bytes of A's region at offset 0. */
    private static void rdma(final QueuePair qa, final Fabric f, final WrOpcode op, final long addr, final int rkey) {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = op.ordinal();
        wr.opcode = op;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.remoteAddr = addr;
        wr.rkey = rkey;
        wr.addSge(Fabric.BASE, 64, f.a.mr.lkey());
        qa.postSend(wr);
    }

    /**
     * A type 2 window of B's domain bound through {@code qb} over the window range of {@code region}
     * with key byte {@code keyByte} and {@code access}; the bind has completed.
     */
    private static MemoryWindow boundType2(
            final Fabric f,
            final Extras x,
            final QueuePair qb,
            final MemoryRegion region,
            final int keyByte,
            final int access) {
        final MemoryWindow mw = x.mw(f.b.pd, MemoryWindow.TYPE_2);
        qb.postSend(bindType2(mw, keyByte, region, access));
        final WorkCompletion bound = one(f, f.b.cq);
        assertThat(bound.opcode).isEqualTo(WcOpcode.BIND_MW);
        assertThat(bound.status).isEqualTo(WcStatus.SUCCESS);
        return mw;
    }

    /** Posts to {@code qp} a 4096-byte receive at the start of {@code host}'s region. */
    private static void postRecv(final QueuePair qp, final Fabric.Host host, final long wrId) {
        final RecvWorkRequest r = new RecvWorkRequest();
        r.wrId = wrId;
        r.addSge(Fabric.BASE, 4096, host.mr.lkey());
        qp.postRecv(r);
    }

    /** A signaled SEND with Invalidate of {@code rkey} carrying {@code len} bytes of A's region. */
    private static SendWorkRequest sendWithInv(final Fabric f, final long wrId, final int rkey, final int len) {
        final SendWorkRequest s = new SendWorkRequest();
        s.wrId = wrId;
        s.opcode = WrOpcode.SEND_WITH_INV;
        s.sendFlags = SendFlags.SIGNALED;
        s.invalidateRkey = rkey;
        s.addSge(Fabric.BASE, len, f.a.mr.lkey());
        return s;
    }

    /** A LOCAL_INV of {@code rkey} with {@code sendFlags}. */
    private static SendWorkRequest localInv(final long wrId, final int rkey, final int sendFlags) {
        final SendWorkRequest inv = new SendWorkRequest();
        inv.wrId = wrId;
        inv.opcode = WrOpcode.LOCAL_INV;
        inv.sendFlags = sendFlags;
        inv.invalidateRkey = rkey;
        return inv;
    }

    private static WorkCompletion one(final Fabric f, final CompletionQueue cq) {
        f.runUntil(() -> cq.size() >= 1, 1_000_000_000L);
        final List<WorkCompletion> c = drain(cq);
        assertThat(c).hasSize(1);
        return c.get(0);
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aType2WindowGrantsItsRangeAndAccessOnlyThroughItsQueuePair(final RecoveryMode mode) {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, mode);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = x.mw(f.b.pd, MemoryWindow.TYPE_2);
            assertThat(mw.isBound()).isFalse();
            assertThat(mw.rkey()).isNotEqualTo(region.rkey());

            qp[1].postSend(bindType2(mw, 0x5A, region, AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ));
            final WorkCompletion bound = one(f, f.b.cq);
            assertThat(bound.opcode).isEqualTo(WcOpcode.BIND_MW);
            assertThat(bound.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(mw.isBound()).isTrue();
            assertThat(mw.rkey() & 0xFF).isEqualTo(0x5A);
            assertThat(region.boundWindows()).isEqualTo(1);

            // WRITE through the window, byte for byte, then READ it back elsewhere.
            f.a.memory.buffer().setBytes(0, new byte[64]);
            for (int i = 0; i < 64; i++) {
                f.a.memory.buffer().setByte(i, i + 1);
            }
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET + 100, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            final ByteBufMemory backing = (ByteBufMemory) region.backing();
            for (int i = 0; i < 64; i++) {
                assertThat(backing.buffer().getByte(WINDOW_OFFSET + 100 + i)).isEqualTo((byte) (i + 1));
            }
            f.a.memory.buffer().setZero(0, 64);
            rdma(qp[0], f, WrOpcode.RDMA_READ, WBASE + WINDOW_OFFSET + 100, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(f.a.memory.buffer().getByte(63)).isEqualTo((byte) 64);

            // The last byte of the window is fine, one byte beyond it is not (though inside the region).
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET + WINDOW_BYTES - 63, mw.rkey());
            final WorkCompletion beyond = one(f, f.a.cq);
            assertThat(beyond.status).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(backing.buffer().getByte(WINDOW_OFFSET + WINDOW_BYTES)).isZero();
            assertThat(qp[1].counters().accessNaksSent).isEqualTo(1);
            assertThat(qp[0].state()).isEqualTo(QpState.ERR);
        }
    }

    @Test
    void aWindowWithoutAnAccessOrFromAnotherQueuePairIsARemoteAccessError() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final QueuePair[] other = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = boundType2(f, x, qp[1], region, 1, AccessFlags.REMOTE_READ);
            rdma(qp[0], f, WrOpcode.RDMA_READ, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            // Type 2B: bound through qp[1], so other[1]'s peer cannot use it.
            rdma(other[0], f, WrOpcode.RDMA_READ, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
            // READ only: a WRITE is refused, memory untouched.
            f.a.memory.buffer().setByte(0, 0x77);
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(((ByteBufMemory) region.backing()).buffer().getByte(WINDOW_OFFSET))
                    .isZero();
        }
    }

    @Test
    void localInvalidationRevokesTheKeyAndAWindowCanBeBoundAgain() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = boundType2(f, x, qp[1], region, 1, AccessFlags.REMOTE_WRITE);
            final int oldKey = mw.rkey();
            // A bound type 2 window cannot be bound again before it is invalidated: MW_BIND_ERR.
            final QueuePair[] spare = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            spare[1].postSend(bindType2(mw, 2, region, AccessFlags.REMOTE_WRITE));
            final WorkCompletion twice = one(f, f.b.cq);
            assertThat(twice.status).isEqualTo(WcStatus.MW_BIND_ERR);
            assertThat(spare[1].state()).isEqualTo(QpState.ERR);

            final SendWorkRequest inv = localInv(60, oldKey, SendFlags.SIGNALED);
            qp[1].postSend(inv);
            final WorkCompletion done = one(f, f.b.cq);
            assertThat(done.opcode).isEqualTo(WcOpcode.LOCAL_INV);
            assertThat(done.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(mw.isBound()).isFalse();
            assertThat(region.boundWindows()).isZero();

            // Rebound with a new key byte: the old rkey stays dead, the new one works.
            qp[1].postSend(bindType2(mw, 2, region, AccessFlags.REMOTE_WRITE));
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.SUCCESS);
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, oldKey);
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_ACCESS_ERR);

            // Invalidating a key that names no bound type 2 window: LOC_QP_OP_ERR, QP to ERR.
            final QueuePair[] fresh = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            inv.invalidateRkey = region.rkey();
            fresh[1].postSend(inv);
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void sendWithInvalidateRevokesThePeersWindowAndSaysSoInTheCompletion(final RecoveryMode mode) {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, mode);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = boundType2(f, x, qp[1], region, 9, AccessFlags.REMOTE_WRITE);
            postRecv(qp[1], f.b, 70);

            final SendWorkRequest s = sendWithInv(f, 71, mw.rkey(), 3000); // FIRST, MIDDLE, LAST with IETH
            final List<Integer> opcodes = new ArrayList<>();
            f.tapAtoB(frame -> opcodes.add(Fabric.opcode(frame)));
            qp[0].postSend(s);
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            final WorkCompletion got = one(f, f.b.cq);
            assertThat(got.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.opcode).isEqualTo(WcOpcode.RECV);
            assertThat(got.byteLen).isEqualTo(3000);
            assertThat(got.wcFlags).isEqualTo(WcFlags.WITH_INV);
            assertThat(got.immData).as("invalidated_rkey").isEqualTo(mw.rkey());
            assertThat(opcodes).startsWith(0x00, 0x01, 0x16);
            assertThat(mw.isBound()).isFalse();

            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void sendWithInvalidateOfAKeyThatIsNoWindowFailsBothSides() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            postRecv(qp[1], f.b, 80);
            // A region's key: nothing to invalidate remotely.
            qp[0].postSend(sendWithInv(f, 81, f.b.mr.rkey(), 10));
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_INV_REQ_ERR);
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.REM_INV_REQ_ERR);
            assertThat(qp[1].state()).isEqualTo(QpState.ERR);
        }
    }

    @Test
    void type1BindsGetANewKeyEachTimeAndCompleteInSendQueueOrder() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = x.mw(f.b.pd, MemoryWindow.TYPE_1);
            final int initial = mw.rkey();
            // B's SEND to A is in flight (A has a receive) when the bind is posted behind it.
            postRecv(qp[0], f.a, 90);
            final SendWorkRequest s = new SendWorkRequest();
            s.wrId = 91;
            s.opcode = WrOpcode.SEND;
            s.sendFlags = SendFlags.SIGNALED;
            s.addSge(Fabric.BASE, 2000, f.b.mr.lkey());
            qp[1].postSend(s);
            final int key = qp[1].bindMw(
                    mw, 92, SendFlags.SIGNALED, region, WBASE + WINDOW_OFFSET, WINDOW_BYTES, AccessFlags.REMOTE_WRITE);
            assertThat(key).isEqualTo((initial & ~0xFF) | ((initial + 1) & 0xFF));
            assertThat(mw.rkey()).isEqualTo(key);
            f.runUntil(() -> f.b.cq.size() == 2, 1_000_000_000L);
            final List<WorkCompletion> done = drain(f.b.cq);
            assertThat(done).extracting(c -> c.wrId).containsExactly(91L, 92L);
            assertThat(done).extracting(c -> c.opcode).containsExactly(WcOpcode.SEND, WcOpcode.BIND_MW);
            drain(f.a.cq);

            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, key);
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            // A type 1 window is used by any QP of its domain: binding again (length 0) revokes the old key.
            final int next = qp[1].bindMw(mw, 93, SendFlags.SIGNALED, region, WBASE, 0, AccessFlags.REMOTE_WRITE);
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(next).isNotEqualTo(key);
            rdma(qp[0], f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, key);
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void malformedRequestsAreEinvalAndBindErrorsCompleteWithMwBindErr() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow t1 = x.mw(f.b.pd, MemoryWindow.TYPE_1);
            final MemoryWindow t2 = x.mw(f.b.pd, MemoryWindow.TYPE_2);
            assertThat(errnoOf(() -> x.mw(f.b.pd, 3))).isEqualTo(Errno.EINVAL);
            // A type 1 window through post_send, a type 2 window through bindMw: EINVAL.
            assertThat(errnoOf(() -> qp[1].postSend(bindType2(t1, 1, region, AccessFlags.REMOTE_READ))))
                    .isEqualTo(Errno.EINVAL);
            assertThat(errnoOf(() -> qp[1].bindMw(t2, 1, 0, region, WBASE, 8, AccessFlags.REMOTE_READ)))
                    .isEqualTo(Errno.EINVAL);
            // Another domain's window.
            final ProtectionDomain otherPd = f.b.ctx.allocatePd();
            x.pds.add(otherPd);
            final MemoryWindow foreign = x.mw(otherPd, MemoryWindow.TYPE_1);
            assertThat(errnoOf(() -> qp[1].bindMw(foreign, 1, 0, region, WBASE, 8, AccessFlags.REMOTE_READ)))
                    .isEqualTo(Errno.EINVAL);
            // A UD QP takes no memory window operations.
            final QueuePair ud = f.b.ctx.createQueuePair(f.b.pd, QpInitAttr.of(QpType.UD, f.b.cq));
            assertThat(errnoOf(() -> ud.postSend(bindType2(t2, 1, region, AccessFlags.REMOTE_READ))))
                    .isEqualTo(Errno.EINVAL);
            ud.destroy();

            // A region registered without MW_BIND: the bind fails when it executes.
            final MemoryRegion plain = f.b.mr;
            qp[1].postSend(bindType2(t2, 1, plain, AccessFlags.REMOTE_READ));
            final WorkCompletion bad = one(f, f.b.cq);
            assertThat(bad.status).isEqualTo(WcStatus.MW_BIND_ERR);
            assertThat(bad.opcode).isEqualTo(WcOpcode.BIND_MW);
            assertThat(qp[1].state()).isEqualTo(QpState.ERR);
            assertThat(t2.isBound()).isFalse();
        }
    }

    @Test
    void aRegionWithABoundWindowCannotBeDeregisteredUntilTheWindowGoes() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = x.mw(f.b.pd, MemoryWindow.TYPE_1);
            // Remote write through a window needs the region's LOCAL_WRITE.
            final MemoryRegion readOnly =
                    x.region(f.b.pd, 0x3000_0000L, 4096, AccessFlags.REMOTE_READ | AccessFlags.MW_BIND);
            qp[1].bindMw(mw, 1, SendFlags.SIGNALED, region, WBASE, 4096, AccessFlags.REMOTE_READ);
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(errnoOf(region::deregister)).isEqualTo(Errno.EBUSY);
            final ProtectionDomain pd = f.b.pd;
            assertThat(errnoOf(pd::deallocate)).isEqualTo(Errno.EBUSY);
            mw.deallocate();
            assertThat(errnoOf(mw::deallocate)).isEqualTo(Errno.EINVAL);
            region.deregister();
            final MemoryWindow w2 = x.mw(f.b.pd, MemoryWindow.TYPE_1);
            qp[1].bindMw(w2, 2, SendFlags.SIGNALED, readOnly, 0x3000_0000L, 64, AccessFlags.REMOTE_WRITE);
            assertThat(one(f, f.b.cq).status).isEqualTo(WcStatus.MW_BIND_ERR);
            w2.deallocate();
            readOnly.deregister();
        }
    }

    @Test
    void aFencedInvalidationWaitsForTheReadBeforeItAndAnUnfencedOneDoesNot() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow fenced = x.mw(f.b.pd, MemoryWindow.TYPE_2);
            final MemoryWindow plain = x.mw(f.b.pd, MemoryWindow.TYPE_2);
            qp[1].postSend(bindType2(fenced, 1, region, AccessFlags.REMOTE_READ));
            qp[1].postSend(bindType2(plain, 1, region, AccessFlags.REMOTE_READ));
            f.runUntil(() -> f.b.cq.size() == 2, 1_000_000_000L);
            assertThat(drain(f.b.cq)).allMatch(c -> c.status == WcStatus.SUCCESS);
            // B reads from A: a READ is outstanding when B posts the invalidations.
            final SendWorkRequest read = new SendWorkRequest();
            read.wrId = 1;
            read.opcode = WrOpcode.RDMA_READ;
            read.sendFlags = SendFlags.SIGNALED;
            read.remoteAddr = Fabric.BASE;
            read.rkey = f.a.mr.rkey();
            read.addSge(Fabric.BASE, 4096, f.b.mr.lkey());
            qp[1].postSend(read);
            qp[1].postSend(localInv(2, plain.rkey(), SendFlags.SIGNALED));
            assertThat(plain.isBound())
                    .as("unfenced: executed when the queue reached it")
                    .isFalse();
            qp[1].postSend(localInv(3, fenced.rkey(), SendFlags.SIGNALED | SendFlags.FENCE));
            assertThat(fenced.isBound()).as("fenced: waits for the READ").isTrue();
            f.runUntil(() -> f.b.cq.size() == 3, 1_000_000_000L);
            assertThat(fenced.isBound()).isFalse();
            final List<WorkCompletion> done = drain(f.b.cq);
            assertThat(done).extracting(c -> c.wrId).containsExactly(1L, 2L, 3L);
            assertThat(done)
                    .extracting(c -> c.opcode)
                    .containsExactly(WcOpcode.RDMA_READ, WcOpcode.LOCAL_INV, WcOpcode.LOCAL_INV);
        }
    }

    @Test
    void aUcQueuePairBindsAType2WindowAndItsPeerWritesThroughIt() {
        try (Fabric f = fabric();
                Extras x = new Extras()) {
            final QueuePair[] uc = f.connectUc(null);
            final QueuePair qa = uc[0];
            final QueuePair qb = uc[1];
            final MemoryRegion region = bindableRegion(f, x, ALL);
            final MemoryWindow mw = boundType2(f, x, qb, region, 3, AccessFlags.REMOTE_WRITE);
            f.a.memory.buffer().setLong(0, 0x1122334455667788L);
            rdma(qa, f, WrOpcode.RDMA_WRITE, WBASE + WINDOW_OFFSET, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            f.settle();
            final ByteBufMemory backing = (ByteBufMemory) region.backing();
            assertThat(backing.buffer().getLong(WINDOW_OFFSET)).isEqualTo(0x1122334455667788L);
            // Outside the window: UC drops the message (no NAK), nothing is written.
            rdma(qa, f, WrOpcode.RDMA_WRITE, WBASE, mw.rkey());
            assertThat(one(f, f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            f.settle();
            assertThat(backing.buffer().getLong(0)).isZero();
            final SendWorkRequest inv = new SendWorkRequest();
            inv.opcode = WrOpcode.SEND_WITH_INV;
            inv.invalidateRkey = mw.rkey();
            assertThat(errnoOf(() -> qa.postSend(inv)))
                    .as("SEND with Invalidate is RC only")
                    .isEqualTo(Errno.EINVAL);
        }
    }

    @Test
    void theDeviceHasAsManyWindowsAsRegionsAndRefusesMore() {
        try (Fabric f = new Fabric(
                7,
                Fabric.fastLink(),
                TransportConfig.defaults(),
                DeviceAttributes.defaults().withMaxMr(4))) {
            assertThat(f.a.device.attributes().maxMw()).isEqualTo(4);
            final List<MemoryWindow> all = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                all.add(f.a.pd.allocMemoryWindow(MemoryWindow.TYPE_2));
            }
            assertThat(all).extracting(MemoryWindow::rkey).doesNotHaveDuplicates();
            assertThat(errnoOf(() -> f.a.pd.allocMemoryWindow(MemoryWindow.TYPE_2)))
                    .isEqualTo(Errno.ENOMEM);
            all.get(0).deallocate();
            final MemoryWindow again = f.a.pd.allocMemoryWindow(MemoryWindow.TYPE_2);
            assertThat(again.rkey())
                    .as("a reused slot gets a new key")
                    .isNotEqualTo(all.get(0).rkey());
            again.deallocate();
            for (int i = 1; i < 4; i++) {
                all.get(i).deallocate();
            }
        }
    }
}
