package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Tail-loss probes for tails lost one after another. Virtual time, 100 Gbit/s, 10 µs round trip,
 * 4 KiB MTU, deterministic drops.
 */
class RcTailProbeTest {
    private static final int PACKET = 4096;

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aTailLostRightAfterAProbeWasAnsweredIsProbedNotTimedOut(RecoveryMode mode) {
        // The last packet of an 8-packet WRITE is lost and recovered by a probe; the probe resent
        // it, so its ACK gives no RTT sample. The next WRITE is one packet, lost too: it is a new
        // tail, and its probe must not wait for a sample that nothing left to take can give.
        try (Fabric f = new Fabric(43, Fabric.fastLink(), TransportConfig.defaults())) {
            QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            RecoveryOps.fill(f.a, 64 * PACKET, 1);
            RecoveryOps.write(f, qp[0], 64 * PACKET);
            RecoveryOps.awaitSuccess(f, 1_000_000L);
            f.scheduler.runFor(2_000_000);
            int[] base = {-1};
            f.tapAtoB(frame -> {
                if (base[0] < 0) {
                    base[0] = Fabric.psn(frame);
                }
            });
            Map<Integer, Integer> sent = new HashMap<>();
            f.dropAtoB(frame -> {
                int psn = Fabric.psn(frame);
                int packet = (psn - base[0]) & 0xFFFFFF;
                return sent.merge(psn, 1, Integer::sum) == 1 && (packet == 7 || packet == 8);
            });
            long probes = qp[0].counters().tailProbes;

            byte[] first = RecoveryOps.fill(f.a, 8 * PACKET, 2);
            RecoveryOps.write(f, qp[0], 8 * PACKET);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(RecoveryOps.contents(f.b, 8 * PACKET)).isEqualTo(first);
            assertThat(qp[0].counters().tailProbes - probes).isEqualTo(1);

            byte[] second = RecoveryOps.fill(f.a, PACKET, 3);
            long start = f.scheduler.nowNs();
            RecoveryOps.write(f, qp[0], PACKET);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            // A probe after about two round trips, not the 100 µs RTO floor.
            assertThat(qp[0].counters().tailProbes - probes).isEqualTo(2);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(f.scheduler.nowNs() - start).isLessThan(60_000);
            assertThat(RecoveryOps.contents(f.b, PACKET)).isEqualTo(second);
            f.settle();
        }
    }
}
