package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * When the tail-loss probe goes on a path whose answers are sometimes late with nothing lost (a
 * peer whose event loop loses its core): never sooner than the configured floor, and never sooner
 * than an answer the path was seen to take. Virtual time, 100 Gbit/s, 10 µs round trip, one 64 B
 * WRITE at a time; a late answer is the responder's ACK held on the way back.
 */
class RcProbeFloorTest {
    private static final int ROUNDS = 80;
    private static final long HOLD_NS = 80_000;

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void anAnswerSeenLateOnceIsNotProbedAgain(final RecoveryMode mode) {
        // Every eighth ACK comes 80 µs late, below the 100 µs RTO floor but far beyond two smoothed
        // round trips, which settle back to ~10 µs in between: the first late ACK draws a probe,
        // whose duplicate ACK shows the original had arrived; the next ones are waited for.
        try (Fabric f = new Fabric(11, Fabric.fastLink(), TransportConfig.defaults())) {
            final QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            final int late = pingPong(f, qp[0], 8);
            assertThat(late).isEqualTo(ROUNDS / 8);
            assertThat(qp[0].counters().tailProbes).isEqualTo(1);
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(1);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[1].counters().duplicateRequests).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void theProbeWaitsForTheConfiguredFloor(final RecoveryMode mode) {
        // Every ACK 80 µs late: with a 200 µs floor nothing is probed at all.
        final TransportConfig config = TransportConfig.defaults().withRto(1_000_000, 1_000_000);
        try (Fabric f = new Fabric(12, Fabric.fastLink(), config.withMinProbeNs(200_000))) {
            final QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            pingPong(f, qp[0], 1);
            assertThat(qp[0].counters().tailProbes).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isZero();
            assertThat(qp[0].counters().timeouts).isZero();
            // A real loss is still recovered by a probe, after the floor and long before the RTO.
            f.ba.faults(FaultConfig.NONE);
            final boolean[] dropped = {false};
            f.dropAtoB(frame -> !dropped[0] && (dropped[0] = true));
            final long start = f.scheduler.nowNs();
            RecoveryOps.write(f, qp[0], 64);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            final long recoveredNs = f.scheduler.nowNs() - start;
            assertThat(qp[0].counters().tailProbes).isEqualTo(1);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(recoveredNs).isBetween(200_000L, 300_000L);
        }
        // Without the floor the same late ACKs are probed (the first of them; see above).
        try (Fabric f = new Fabric(12, Fabric.fastLink(), config)) {
            final QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
            pingPong(f, qp[0], 1);
            assertThat(qp[0].counters().tailProbes).isPositive();
        }
    }

    /**
     * {@link #ROUNDS} one-packet WRITEs, one at a time, after a warm-up of 16 whose ACKs are on time;
     * every {@code lateEvery}-th one's ACK is held {@link #HOLD_NS}. Returns how many were held.
     */
    private static int pingPong(final Fabric f, final QueuePair qp, final int lateEvery) {
        for (int i = 0; i < 16; i++) {
            RecoveryOps.write(f, qp, 64);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
        }
        int late = 0;
        for (int i = 1; i <= ROUNDS; i++) {
            final boolean hold = i % lateEvery == 0;
            f.ba.faults(hold ? FaultConfig.NONE.withDelay(HOLD_NS, 0) : FaultConfig.NONE);
            late += hold ? 1 : 0;
            RecoveryOps.write(f, qp, 64);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            // The duplicate ACK of a probe, if one went, is on its way: let it arrive.
            f.scheduler.runFor(200_000);
        }
        f.ba.faults(FaultConfig.NONE);
        return late;
    }
}
