package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * An application that closes its QP right after its last receive completion, while the ACK of that
 * message is still deferred to the end of the turn (ibv_rc_pingpong's server): the ACK must leave
 * with the close, or the requester resends into a QP that never answers and fails with
 * RETRY_EXC_ERR after its retries.
 */
class OwedAckTest {
    enum Close {
        DESTROY,
        ERR,
        RESET_THEN_DESTROY
    }

    @ParameterizedTest
    @CsvSource({
        "DESTROY, GO_BACK_N",
        "DESTROY, SELECTIVE_REPEAT",
        "ERR, GO_BACK_N",
        "ERR, SELECTIVE_REPEAT",
        "RESET_THEN_DESTROY, GO_BACK_N",
        "RESET_THEN_DESTROY, SELECTIVE_REPEAT"
    })
    void theDeferredAckLeavesWhenTheResponderCloses(final Close close, final RecoveryMode mode) {
        try (Fabric f = new Fabric(7, Fabric.fastLink(), TransportConfig.defaults())) {
            // Timeout code 10 (4.2 ms), 7 retries: a lost ACK fails the SEND after ~34 ms.
            final QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096, 10);
            final RecvWorkRequest r = new RecvWorkRequest();
            r.wrId = 1;
            r.addSge(Fabric.BASE + 8192, 64, f.b.mr.lkey());
            qp[1].postRecv(r);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.wrId = 2;
            wr.opcode = WrOpcode.SEND;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.addSge(Fabric.BASE, 64, f.a.mr.lkey());
            qp[0].postSend(wr);
            // The receive completes while the SEND's ACK is still deferred to the end of the turn.
            assertThat(f.runUntil(() -> f.b.cq.size() == 1, 1_000_000_000L)).isTrue();
            final long acksBefore = qp[1].counters().txAcks;
            switch (close) {
                case DESTROY -> f.destroyNow(qp[1]);
                case ERR -> toState(qp[1], QpState.ERR);
                case RESET_THEN_DESTROY -> {
                    toState(qp[1], QpState.RESET);
                    f.destroyNow(qp[1]);
                }
            }
            assertThat(qp[1].counters().txAcks).as("ACK sent at the close").isEqualTo(acksBefore + 1);
            assertThat(f.runUntil(() -> f.a.cq.size() == 1, 1_000_000_000L)).isTrue();
            final WorkCompletion wc = new WorkCompletion();
            assertThat(f.a.cq.poll(new WorkCompletion[] {wc})).isEqualTo(1);
            assertThat(wc.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc.opcode).isEqualTo(WcOpcode.SEND);
            f.settle();
            assertThat(qp[0].counters().retransmittedPackets).isZero();
            assertThat(qp[0].counters().tailProbes).isZero();
            assertThat(qp[0].counters().timeouts).isZero();
        }
    }

    private static void toState(final QueuePair qp, final QpState s) {
        final QpAttr a = new QpAttr();
        a.qpState = s;
        qp.modify(a, QpAttrMask.STATE);
    }
}
