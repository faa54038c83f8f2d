package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * A healthy flow that congestion control paces slowly never times out: the responder ACKs every
 * few packets, so at a low rate the ACK of the oldest packet legitimately comes several pacing gaps
 * after it left, later than the RTO floor. The retransmission timer allows for those gaps.
 */
class RcPacedRtoTest {
    /** Line rate until {@code cutNs}, then {@code slowBps}: a congestion control's rate cut. */
    static final class RateCut implements RateWindowSource {
        private final long cutNs;
        private final long slowBps;
        private final long windowBytes;
        private long rateBps = 100_000_000_000L;

        RateCut(final long cutNs, final long slowBps, final long windowBytes) {
            this.cutNs = cutNs;
            this.slowBps = slowBps;
            this.windowBytes = windowBytes;
        }

        @Override
        public long rateBps() {
            return rateBps;
        }

        @Override
        public long windowBytes() {
            return windowBytes;
        }

        @Override
        public void onPacketSent(final long nowNs, final int bytes) {
            if (nowNs >= cutNs) {
                rateBps = slowBps;
            }
        }
    }

    private static final long CUT_NS = 2_003_000;

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aFlowPacedBelowTheRtoFloorsAckGapNeverTimesOut(RecoveryMode mode) {
        // 200 Mbit/s: one 4 KiB packet every 165 µs, an ACK every fourth packet (~500 µs), while the
        // RTO learnt 10 µs round trips at line rate and sits at its 100 µs floor.
        TransportConfig config = TransportConfig.defaults()
                .withRateWindowFactory((qpn, line, rtt, window) -> new RateCut(CUT_NS, 200_000_000L, 256 * 1024));
        try (Fabric f = new Fabric(21, Fabric.fastLink(), config)) {
            QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            int len = 256 * 1024;
            // A first WRITE at line rate teaches the RTO the 10 µs round trip.
            RecoveryOps.fill(f.a, len, 3);
            RecoveryOps.write(f, qp[0], len);
            RecoveryOps.awaitSuccess(f, 1_000_000L);
            f.scheduler.runFor(CUT_NS - 3_000 - f.scheduler.nowNs());
            byte[] data = RecoveryOps.fill(f.a, len, 7);
            RecoveryOps.write(f, qp[0], len);
            RecoveryOps.awaitSuccess(f, 100_000_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().tailProbes).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isZero();
            assertThat(RecoveryOps.contents(f.b, len)).isEqualTo(data);
            f.settle();
        }
    }
}
