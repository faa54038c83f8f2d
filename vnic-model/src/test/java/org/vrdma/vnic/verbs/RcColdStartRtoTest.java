package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * A new QP times out no sooner than the round trips its device already measured on other QPs: with
 * a connection per flow on a path slower than the configured initial RTO, only the first
 * connection pays for the cold start with spurious timeouts and retransmissions.
 */
class RcColdStartRtoTest {
    private static void write(Fabric f, QueuePair qp, long wrId) {
        SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = wrId;
        wr.opcode = WrOpcode.RDMA_WRITE;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.remoteAddr = Fabric.BASE;
        wr.rkey = f.b.mr.rkey();
        wr.addSge(Fabric.BASE, 16 * 1024, f.a.mr.lkey());
        qp.postSend(wr);
    }

    private static void completeOne(Fabric f, QueuePair qp, long wrId) {
        write(f, qp, wrId);
        assertThat(f.runUntil(() -> f.a.cq.size() == 1, 5_000_000_000L)).isTrue();
        WorkCompletion[] wc = {new WorkCompletion()};
        assertThat(f.a.cq.poll(wc)).isEqualTo(1);
        assertThat(wc[0].status).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc[0].wrId).isEqualTo(wrId);
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aNewQpStartsFromTheRoundTripsItsDeviceMeasured(RecoveryMode mode) {
        // 35 ms round trip, initial RTO 10 ms: a cold QP times out at 10 and 30 ms before its first
        // ACK; its next message, with the backed-off RTO of 40 ms, is timed.
        LinkConfig slow = LinkConfig.of(100_000_000_000L, 17_500_000L).withQueueCapacityBytes(4 << 20);
        TransportConfig config = TransportConfig.defaults().withRto(1_000_000, 10_000_000);
        try (Fabric f = new Fabric(21, slow, config)) {
            QueuePair[] first = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096, 20);
            completeOne(f, first[0], 1);
            assertThat(first[0].counters().timeouts).isPositive();
            assertThat(first[0].counters().retransmittedPackets).isPositive();
            // Its second message is timed (the first was resent: Karn's rule): the device has a sample.
            completeOne(f, first[0], 2);
            assertThat(f.a.device.pathRtt().hasSample()).isTrue();
            f.settle();
            QueuePair[] second = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096, 20);
            completeOne(f, second[0], 3);
            assertThat(second[0].counters().timeouts).isZero();
            assertThat(second[0].counters().retransmittedPackets).isZero();
            f.settle();
        }
    }
}
