package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * A responder that answers a SEND at once (a ping-pong) must not let its answer overtake the ACK
 * of the message it answers: the requester would then see its receive completion before its send
 * completion, which hardware never shows and which perftest's event mode relies on.
 */
class AckBeforeAnswerTest {
    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void theAckOfAPingLeavesBeforeThePong(final RecoveryMode mode) {
        try (Fabric f = new Fabric(5, Fabric.fastLink(), TransportConfig.defaults())) {
            final QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            for (int round = 0; round < 20; round++) {
                recv(qp[0], f.a, round);
                recv(qp[1], f.b, round);
                send(qp[0], f.a, round);
                // The ping's receive completion is visible while its ACK is still deferred to the
                // end of this turn; the application answers right away.
                assertThat(f.runUntil(() -> f.b.cq.size() == 1, 1_000_000_000L)).isTrue();
                assertThat(drain(f.b.cq)).containsExactly(WcOpcode.RECV);
                send(qp[1], f.b, round);
                assertThat(f.runUntil(() -> f.a.cq.size() == 2 && f.b.cq.size() == 1, 1_000_000_000L))
                        .isTrue();
                assertThat(drain(f.a.cq)).as("round %d", round).containsExactly(WcOpcode.SEND, WcOpcode.RECV);
                assertThat(drain(f.b.cq)).containsExactly(WcOpcode.SEND);
            }
            assertThat(qp[0].counters().timeouts + qp[1].counters().timeouts).isZero();
        }
    }

    private static void recv(final QueuePair qp, final Fabric.Host h, final int round) {
        final RecvWorkRequest r = new RecvWorkRequest();
        r.wrId = round;
        r.addSge(Fabric.BASE + 8192, 64, h.mr.lkey());
        qp.postRecv(r);
    }

    private static void send(final QueuePair qp, final Fabric.Host h, final int round) {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = round;
        wr.opcode = WrOpcode.SEND;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.addSge(Fabric.BASE, 64, h.mr.lkey());
        qp.postSend(wr);
    }

    private static List<WcOpcode> drain(final CompletionQueue cq) {
        final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        final List<WcOpcode> out = new ArrayList<>();
        final int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            assertThat(wcs[i].status).isEqualTo(WcStatus.SUCCESS);
            out.add(wcs[i].opcode);
        }
        return out;
    }
}
