package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * A rate change takes effect at once, also for the gap the pacer already counts down: a flow that
 * congestion control paced at a few Mbit/s (Swift below one packet per round trip) and then raised
 * back to line rate must not sit out the gap of the slow rate. In the 32:1 incast lab two Swift flows
 * waited 4.5 ms for the next packet while their rate had long been back at 100 Gbit/s.
 */
class RcPacerRateChangeTest {
    /** A one-packet window at line rate, unless set slower; an ACK restores line rate. */
    static final class SlowThenFast implements RateWindowSource {
        long rateBps = 100_000_000_000L;

        @Override
        public long rateBps() {
            return rateBps;
        }

        @Override
        public long windowBytes() {
            return 4096;
        }

        @Override
        public void onAck(final long nowNs, final long ackedBytes, final long rttNs, final boolean ecnEcho) {
            rateBps = 100_000_000_000L;
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aRaisedRateCutsTheGapTheSlowRateSet(RecoveryMode mode) {
        SlowThenFast[] cc = {null};
        TransportConfig config = TransportConfig.defaults().withRateWindowFactory((qpn, line, rtt, window) -> {
            SlowThenFast s = new SlowThenFast();
            if (cc[0] == null) {
                cc[0] = s;
            }
            return s;
        });
        try (Fabric f = new Fabric(51, Fabric.fastLink(), config)) {
            QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            int len = 16 * 4096;
            RecoveryOps.fill(f.a, len, 3);
            RecoveryOps.write(f, qp[0], len);
            RecoveryOps.awaitSuccess(f, 1_000_000L);
            f.scheduler.runFor(1_000_000);
            // The first packet leaves at 7 Mbit/s: the next may go 4.7 ms later at that rate. Its ACK
            // (10 µs later) raises the rate to line rate, so the other 15 follow one round trip each.
            cc[0].rateBps = 7_000_000L;
            byte[] data = RecoveryOps.fill(f.a, len, 8);
            long start = f.scheduler.nowNs();
            RecoveryOps.write(f, qp[0], len);
            RecoveryOps.awaitSuccess(f, 100_000_000L);
            assertThat(f.scheduler.nowNs() - start).isLessThan(16 * 15_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isZero();
            assertThat(RecoveryOps.contents(f.b, len)).isEqualTo(data);
            f.settle();
        }
    }
}
