package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.CongestionControls;
import org.vrdma.vnic.transport.CongestionControlSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/** The transport drives the congestion-control module's algorithms through {@link CongestionControlSource}. */
class CongestionControlWiringTest {
    private static final int LEN = 256 * 1024;

    /** Goodput of 16 WRITEs of 256 KiB over a 100 Gbit/s link with every data packet CE-marked or not. */
    private static double writeGbps(String algorithm, boolean congested) {
        TransportConfig config = TransportConfig.defaults()
                .withRateWindowFactory(CongestionControlSource.factory(
                        CongestionControls.defaults().configure(algorithm, "{}"), 4096));
        try (Fabric f = new Fabric(42, Fabric.fastLink(), config)) {
            QueuePair[] qp = f.connectRc(RecoveryMode.SELECTIVE_REPEAT, new QpCap(64, 64, 1, 1, 64), Mtu.MTU_4096);
            f.markCe(congested);
            long start = f.scheduler.nowNs();
            SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < 16; i++) {
                wr.reset();
                wr.wrId = i;
                wr.opcode = WrOpcode.RDMA_WRITE;
                wr.sendFlags = SendFlags.SIGNALED;
                wr.remoteAddr = Fabric.BASE;
                wr.rkey = f.b.mr.rkey();
                wr.addSge(Fabric.BASE, LEN, f.a.mr.lkey());
                qp[0].postSend(wr);
            }
            assertThat(f.runUntil(() -> f.a.cq.size() == 16, 1_000_000_000L)).isTrue();
            long elapsedNs = f.scheduler.nowNs() - start;
            if (congested) {
                assertThat(qp[0].counters().cnpsReceived).isPositive();
            }
            assertThat(((CongestionControlSource) qp[0].window().source())
                            .algorithm()
                            .name())
                    .isEqualTo(algorithm);
            return 16.0 * LEN * 8 / elapsedNs;
        }
    }

    @Test
    void dcqcnSlowsAFlowWhoseDataIsCeMarkedAndRunsAtLineRateOtherwise() {
        double free = writeGbps("dcqcn", false);
        double congested = writeGbps("dcqcn", true);
        assertThat(free).isGreaterThan(80);
        assertThat(congested).isLessThan(free / 2);
    }

    @Test
    void staticIgnoresMarks() {
        assertThat(writeGbps("static", true)).isGreaterThan(80);
    }
}
