package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * {@code retry_cnt} counts expirations of the QP's ACK timeout (4.096 µs · 2^timeout), as on
 * hardware; the adaptive retransmission timeout only resends earlier. A path slower than the
 * backed-off RTOs (a descheduled event loop, a deep queue) therefore costs retransmissions, not
 * the connection; a dead path fails after {@code retry_cnt + 1} ACK timeouts.
 */
class RcAckTimeoutTest {
    /** ACK timeout code 16: 4.096 µs · 2^16 = 268.4 ms. */
    private static final int TIMEOUT_CODE = 16;

    private static final long ACK_TIMEOUT_NS = 4096L << TIMEOUT_CODE;

    private static void write(Fabric f, QueuePair qp, int len) {
        SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = 1;
        wr.opcode = WrOpcode.RDMA_WRITE;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.remoteAddr = Fabric.BASE;
        wr.rkey = f.b.mr.rkey();
        wr.addSge(Fabric.BASE, len, f.a.mr.lkey());
        qp.postSend(wr);
    }

    private static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] wc = {new WorkCompletion()};
        assertThat(cq.poll(wc)).isEqualTo(1);
        return wc[0];
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aRoundTripLongerThanTheBackedOffRtosSpendsNoRetries(RecoveryMode mode) {
        // 150 ms each way: the first ACK is back after 300 ms, while the RTO (1 ms, doubling) expires
        // at 1, 3, 7, ..., 255 ms: eight expirations, more than retry_cnt (7), but one ACK timeout.
        LinkConfig slow = LinkConfig.of(100_000_000_000L, 150_000_000L).withQueueCapacityBytes(4 << 20);
        TransportConfig config = TransportConfig.defaults().withRto(1_000_000, 1_000_000);
        try (Fabric f = new Fabric(11, slow, config)) {
            QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096, TIMEOUT_CODE);
            long start = f.scheduler.nowNs();
            write(f, qp[0], 64 * 1024);
            assertThat(f.runUntil(() -> f.a.cq.size() == 1, 5_000_000_000L)).isTrue();
            assertThat(poll(f.a.cq).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(qp[0].counters().timeouts).isGreaterThan(7);
            assertThat(qp[0].counters().retransmittedPackets).isPositive();
            assertThat(f.scheduler.nowNs() - start).isBetween(300_000_000L, 300_000_000L + ACK_TIMEOUT_NS);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aDeadPathFailsAfterRetryCountPlusOneAckTimeouts(RecoveryMode mode) {
        try (Fabric f = new Fabric(12, Fabric.fastLink(), TransportConfig.defaults())) {
            QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_1024, TIMEOUT_CODE);
            f.ab.faults(FaultConfig.randomLoss(1.0));
            long start = f.scheduler.nowNs();
            write(f, qp[0], 100);
            assertThat(f.runUntil(() -> f.a.cq.size() == 1, 10_000_000_000L)).isTrue();
            assertThat(poll(f.a.cq).status).isEqualTo(WcStatus.RETRY_EXC_ERR);
            // retry_cnt 7: seven retries, the eighth expiry fails the request.
            assertThat(f.scheduler.nowNs() - start).isBetween(8 * ACK_TIMEOUT_NS, 8 * ACK_TIMEOUT_NS + 1_000_000L);
            // The adaptive RTO (1 ms, doubling up to the ACK timeout) resent in between.
            assertThat(qp[0].counters().timeouts).isGreaterThan(8);
        }
    }
}
