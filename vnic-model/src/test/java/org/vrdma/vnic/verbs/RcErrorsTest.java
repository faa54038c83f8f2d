package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vnic.verbs.Fabric.drain;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;

/** Retry and RNR exhaustion, remote errors, flushes: the error paths behave like hardware. */
class RcErrorsTest {
    private static Fabric fabric() {
        return new Fabric(42, Fabric.fastLink(), TransportConfig.defaults());
    }

    private static QueuePair[] connect(final Fabric f, final RecoveryMode mode) {
        return f.connectRc(mode, new QpCap(16, 16, 4, 4, 64), Mtu.MTU_1024);
    }

    private static void post(final QueuePair qp, final WrOpcode op, final long wrId, final Fabric f, final int len) {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = wrId;
        wr.opcode = op;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.remoteAddr = Fabric.BASE;
        wr.rkey = f.b.mr.rkey();
        wr.addSge(Fabric.BASE, len, f.a.mr.lkey());
        qp.postSend(wr);
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void retryExhaustionFailsTheRequestAndFlushesTheRest(final RecoveryMode mode) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, mode);
            f.ab.faults(FaultConfig.randomLoss(1.0));
            post(qp[0], WrOpcode.SEND, 1, f, 100);
            post(qp[0], WrOpcode.RDMA_WRITE, 2, f, 100);
            f.runUntil(() -> f.a.cq.size() == 2, 10_000_000_000L);
            final List<WorkCompletion> c = drain(f.a.cq);
            assertThat(c).extracting(w -> w.status).containsExactly(WcStatus.RETRY_EXC_ERR, WcStatus.WR_FLUSH_ERR);
            assertThat(c).extracting(w -> w.wrId).containsExactly(1L, 2L);
            assertThat(qp[0].state()).isEqualTo(QpState.ERR);
            final TransportCounters k = qp[0].counters();
            // The RTO resends early at 1 and 3 ms; then eight ACK timeouts: seven retries, the eighth fails.
            assertThat(k.timeouts).isEqualTo(10);
            assertThat(k.retransmittedPackets).isGreaterThanOrEqualTo(7);
        }
    }

    @Test
    void rtoBacksOffExponentiallyUpToTheTimeoutAttribute() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            f.ab.faults(FaultConfig.randomLoss(1.0));
            final long start = f.scheduler.nowNs();
            post(qp[0], WrOpcode.SEND, 1, f, 10);
            f.runUntil(() -> f.a.cq.size() == 1, 10_000_000_000L);
            final long elapsed = f.scheduler.nowNs() - start;
            // The RTO (initial 1 ms, doubling) resends at 1 and 3 ms, then no later than each ACK
            // timeout (4.096 µs·2^10 = 4.19 ms); each of those spends a retry: 7 retries, and the
            // eighth expiry fails the request at 8 · 4.19 = 33.6 ms.
            assertThat(elapsed).isBetween(8 * (4096L << 10), 8 * (4096L << 10) + 100_000L);
            assertThat(qp[0].counters().timeouts).isEqualTo(10);
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void rnrRetryExhaustion(final RecoveryMode mode) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, mode);
            final QpAttr a = new QpAttr();
            a.qpState = QpState.SQD;
            qp[0].modify(a, QpAttrMask.STATE);
            a.rnrRetry = 2;
            qp[0].modify(a, QpAttrMask.RNR_RETRY);
            a.qpState = QpState.RTS;
            qp[0].modify(a, QpAttrMask.STATE);
            post(qp[0], WrOpcode.SEND, 7, f, 100);
            f.runUntil(() -> f.a.cq.size() == 1, 1_000_000_000L);
            assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.RNR_RETRY_EXC_ERR);
            assertThat(qp[0].counters().rnrNaksReceived).isEqualTo(3);
            assertThat(qp[1].counters().rnrNaksSent).isEqualTo(3);
            assertThat(qp[0].state()).isEqualTo(QpState.ERR);
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void infiniteRnrRetryWaitsForAReceive(final RecoveryMode mode) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, mode);
            post(qp[0], WrOpcode.SEND, 7, f, 3000);
            f.scheduler.runFor(5_000_000);
            assertThat(f.a.cq.size()).isZero();
            assertThat(qp[0].counters().rnrNaksReceived).isGreaterThan(3);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 99;
            r.addSge(Fabric.BASE, 4096, f.b.mr.lkey());
            qp[1].postRecv(r);
            f.runUntil(() -> f.a.cq.size() == 1 && f.b.cq.size() == 1, 100_000_000L);
            assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.SUCCESS);
            assertThat(drain(f.b.cq)).extracting(w -> w.byteLen).containsExactly(3000);
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void remoteAccessViolationsNeverTouchMemory(final RecoveryMode mode) {
        try (Fabric f = fabric()) {
            final ByteBufMemory ro = ByteBufMemory.allocate(io.netty.buffer.PooledByteBufAllocator.DEFAULT, 8192);
            final MemoryRegion readOnly = f.b.pd.registerMemoryRegion(ro, 0x9000_0000L, AccessFlags.REMOTE_READ);
            try {
                final long[][] cases = {
                    // rkey, remote address, length
                    {f.b.mr.rkey() ^ 0x100, Fabric.BASE, 100}, // unknown key
                    {f.b.mr.rkey(), Fabric.BASE + Fabric.MEMORY_BYTES - 50, 100}, // runs past the end
                    {f.b.mr.rkey(), Fabric.BASE - 1, 10}, // starts before
                    {readOnly.rkey(), 0x9000_0000L, 100}, // no REMOTE_WRITE
                };
                for (final long[] c : cases) {
                    final QueuePair[] qp = connect(f, mode);
                    f.a.memory.buffer().setBytes(0, new byte[4096]);
                    final SendWorkRequest wr = new SendWorkRequest();
                    wr.wrId = 5;
                    wr.opcode = WrOpcode.RDMA_WRITE;
                    wr.sendFlags = SendFlags.SIGNALED;
                    wr.rkey = (int) c[0];
                    wr.remoteAddr = c[1];
                    wr.addSge(Fabric.BASE, (int) c[2], f.a.mr.lkey());
                    f.a.memory.buffer().setBytes(0, filled(4096, (byte) 0x77));
                    qp[0].postSend(wr);
                    f.runUntil(() -> f.a.cq.size() == 1, 100_000_000L);
                    assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.REM_ACCESS_ERR);
                    assertThat(qp[0].state()).isEqualTo(QpState.ERR);
                    assertThat(qp[1].state()).isEqualTo(QpState.ERR);
                    assertThat(qp[1].counters().accessNaksSent).isEqualTo(1);
                    assertThat(allZero(f.b.memory)).as("B memory untouched").isTrue();
                    assertThat(allZero(ro)).as("read-only region untouched").isTrue();
                }
                // A READ needs REMOTE_READ on the QP and the region: the default region allows it, so
                // try a region that only allows writes.
                final ByteBufMemory wo = ByteBufMemory.allocate(io.netty.buffer.PooledByteBufAllocator.DEFAULT, 4096);
                final MemoryRegion writeOnly = f.b.pd.registerMemoryRegion(
                        wo, 0xA000_0000L, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                final QueuePair[] qp = connect(f, mode);
                final SendWorkRequest wr = new SendWorkRequest();
                wr.opcode = WrOpcode.RDMA_READ;
                wr.sendFlags = SendFlags.SIGNALED;
                wr.rkey = writeOnly.rkey();
                wr.remoteAddr = 0xA000_0000L;
                wr.addSge(Fabric.BASE, 64, f.a.mr.lkey());
                qp[0].postSend(wr);
                f.runUntil(() -> f.a.cq.size() == 1, 100_000_000L);
                assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.REM_ACCESS_ERR);
                writeOnly.deregister();
                wo.release();
            } finally {
                readOnly.deregister();
                ro.release();
            }
        }
    }

    @Test
    void misalignedAtomicIsAnInvalidRequest() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.rkey = f.b.mr.rkey();
            wr.remoteAddr = Fabric.BASE + 4;
            wr.compareAdd = 1;
            wr.addSge(Fabric.BASE, 8, f.a.mr.lkey());
            qp[0].postSend(wr);
            f.runUntil(() -> f.a.cq.size() == 1, 100_000_000L);
            assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.REM_INV_REQ_ERR);
            assertThat(allZero(f.b.memory)).isTrue();
        }
    }

    @Test
    void receiveTooSmallIsALocalLengthErrorThere() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 3;
            r.addSge(Fabric.BASE, 1000, f.b.mr.lkey());
            qp[1].postRecv(r);
            r.wrId = 4;
            qp[1].postRecv(r);
            post(qp[0], WrOpcode.SEND, 1, f, 2500);
            f.runUntil(() -> f.a.cq.size() == 1, 100_000_000L);
            assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.REM_INV_REQ_ERR);
            assertThat(drain(f.b.cq))
                    .extracting(w -> w.status)
                    .containsExactly(WcStatus.LOC_LEN_ERR, WcStatus.WR_FLUSH_ERR);
        }
    }

    /** Memory an application unmapped after registering it: every access fails with EFAULT. */
    private static final class UnmappedMemory implements org.vrdma.vnic.memory.MemoryRegionBacking {
        int faults;

        private VerbsException fault() {
            faults++;
            return new VerbsException(Errno.EFAULT, "page not mapped");
        }

        @Override
        public long capacity() {
            return 1 << 20;
        }

        @Override
        public void read(final long offset, final io.netty.buffer.ByteBuf dst, final int length) {
            throw fault();
        }

        @Override
        public void write(final long offset, final io.netty.buffer.ByteBuf src, final int srcIndex, final int length) {
            throw fault();
        }

        @Override
        public void read(final long offset, final byte[] dst, final int dstIndex, final int length) {
            throw fault();
        }

        @Override
        public void write(final long offset, final byte[] src, final int srcIndex, final int length) {
            throw fault();
        }

        @Override
        public long readLong(final long offset) {
            throw fault();
        }

        @Override
        public void writeLong(final long offset, final long value) {
            throw fault();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = WrOpcode.class,
            names = {"RDMA_WRITE", "SEND", "RDMA_READ", "ATOMIC_FETCH_AND_ADD"})
    void localMemoryThatFaultsCompletesWithLocalProtectionErrorAndFlushesTheRest(final WrOpcode op) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.addSge(Fabric.BASE, 4096, f.b.mr.lkey());
            qp[1].postRecv(r);
            final UnmappedMemory gone = new UnmappedMemory();
            final MemoryRegion mr = f.a.pd.registerMemoryRegion(gone, 0x5000_0000L, AccessFlags.LOCAL_WRITE);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.wrId = 1;
            wr.opcode = op;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.remoteAddr = Fabric.BASE;
            wr.rkey = f.b.mr.rkey();
            wr.addSge(0x5000_0000L, op.isAtomic() ? 8 : 3000, mr.lkey());
            qp[0].postSend(wr);
            post(qp[0], WrOpcode.RDMA_WRITE, 2, f, 100);
            f.runUntil(() -> f.a.cq.size() == 2, 100_000_000L);
            assertThat(drain(f.a.cq))
                    .extracting(w -> w.status)
                    .containsExactly(WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR);
            assertThat(qp[0].state()).isEqualTo(QpState.ERR);
            assertThat(gone.faults).isPositive();
            assertThat(qp[0].counters().localMemoryFaults + qp[1].counters().localMemoryFaults)
                    .isPositive();
            mr.deregister();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = WrOpcode.class,
            names = {"RDMA_WRITE", "RDMA_READ", "ATOMIC_CMP_AND_SWP"})
    void remoteMemoryThatFaultsIsARemoteAccessErrorForThePeer(final WrOpcode op) {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            final UnmappedMemory gone = new UnmappedMemory();
            final MemoryRegion target = f.b.pd.registerMemoryRegion(
                    gone,
                    0x6000_0000L,
                    AccessFlags.LOCAL_WRITE
                            | AccessFlags.REMOTE_WRITE
                            | AccessFlags.REMOTE_READ
                            | AccessFlags.REMOTE_ATOMIC);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.wrId = 1;
            wr.opcode = op;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.remoteAddr = 0x6000_0000L;
            wr.rkey = target.rkey();
            wr.addSge(Fabric.BASE, op.isAtomic() ? 8 : 2000, f.a.mr.lkey());
            qp[0].postSend(wr);
            f.runUntil(() -> f.a.cq.size() == 1, 100_000_000L);
            assertThat(drain(f.a.cq)).extracting(w -> w.status).containsExactly(WcStatus.REM_ACCESS_ERR);
            assertThat(qp[1].state()).isEqualTo(QpState.ERR);
            assertThat(qp[1].counters().localMemoryFaults).isPositive();
            target.deregister();
        }
    }

    @Test
    void localProtectionErrorCompletesInOrder() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.addSge(Fabric.BASE, 4096, f.b.mr.lkey());
            qp[1].postRecv(r);
            post(qp[0], WrOpcode.SEND, 1, f, 100);
            final SendWorkRequest bad = new SendWorkRequest();
            bad.wrId = 2;
            bad.opcode = WrOpcode.SEND;
            bad.addSge(Fabric.BASE, 100, 0x7777_7700);
            qp[0].postSend(bad);
            post(qp[0], WrOpcode.SEND, 3, f, 100);
            f.runUntil(() -> f.a.cq.size() == 3, 100_000_000L);
            assertThat(drain(f.a.cq))
                    .extracting(w -> w.status)
                    .containsExactly(WcStatus.SUCCESS, WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR);
        }
    }

    @Test
    void errorStateFlushesEverythingAndLaterPosts() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            f.ab.faults(FaultConfig.randomLoss(1.0));
            post(qp[0], WrOpcode.RDMA_WRITE, 1, f, 100);
            post(qp[0], WrOpcode.RDMA_READ, 2, f, 100);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 9;
            r.addSge(Fabric.BASE, 64, f.a.mr.lkey());
            qp[0].postRecv(r);
            final QpAttr a = new QpAttr();
            a.qpState = QpState.ERR;
            qp[0].modify(a, QpAttrMask.STATE);
            post(qp[0], WrOpcode.SEND, 3, f, 10);
            final List<WorkCompletion> c = drain(f.a.cq);
            assertThat(c).extracting(w -> w.status).containsOnly(WcStatus.WR_FLUSH_ERR);
            assertThat(c).extracting(w -> w.wrId).containsExactly(1L, 2L, 9L, 3L);
            f.scheduler.runFor(50_000_000);
            assertThat(f.a.cq.size()).isZero(); // timers were cancelled
        }
    }

    @Test
    void ceMarkedDataMakesTheReceiverSendRateLimitedCnps() {
        try (Fabric f = fabric()) {
            final QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            f.markCe(true);
            final long start = f.scheduler.nowNs();
            for (int i = 0; i < 16; i++) {
                post(qp[0], WrOpcode.RDMA_WRITE, i, f, 256 * 1024);
                f.runUntil(() -> f.a.cq.size() > 0, 100_000_000L);
                drain(f.a.cq);
            }
            final long elapsedUs = (f.scheduler.nowNs() - start) / 1000;
            final TransportCounters b = qp[1].counters();
            assertThat(b.ecnMarked).isGreaterThan(500);
            assertThat(b.cnpsSent).isBetween(2L, elapsedUs / 50 + 1);
            f.settle();
            assertThat(qp[0].counters().cnpsReceived).isEqualTo(b.cnpsSent);
        }
    }

    private static byte[] filled(final int n, final byte v) {
        final byte[] b = new byte[n];
        java.util.Arrays.fill(b, v);
        return b;
    }

    private static boolean allZero(final ByteBufMemory m) {
        final byte[] b = new byte[(int) m.capacity()];
        m.buffer().getBytes(0, b);
        for (final byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
