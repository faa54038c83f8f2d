package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Recovery when resends are lost too and when the round trip grows, as in an incast: holes whose
 * resends were lost are all resent once a packet sent after them arrives (not one per probe); a
 * round trip that grows past the probe time is learnt (not probed at every packet); congestion
 * control hears of a probe's resends. Virtual time, 100 Gbit/s, 10 µs round trip, 4 KiB MTU,
 * deterministic drops.
 */
class RcResendLossTest {
    private static final int LEN = 256 * 1024;

    private static QueuePair[] connect(final Fabric f, final RecoveryMode mode) {
        return f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
    }

    private static void warmUp(final Fabric f, final QueuePair qp) {
        RecoveryOps.fill(f.a, LEN, 1);
        RecoveryOps.write(f, qp, LEN);
        RecoveryOps.awaitSuccess(f, 1_000_000L);
        f.scheduler.runFor(2_000_000);
    }

    /** Drops the frames whose PSN offset from {@code basePsn[0]}, at their n-th sending, {@code pick} names. */
    private static Predicate<ByteBuf> dropNth(final int[] basePsn, final SendPick pick) {
        final Map<Integer, Integer> sent = new HashMap<>();
        return frame -> {
            final int psn = Fabric.psn(frame);
            final int n = sent.merge(psn, 1, Integer::sum);
            return pick.drop((psn - basePsn[0]) & 0xFFFFFF, n);
        };
    }

    @FunctionalInterface
    private interface SendPick {
        boolean drop(int packet, int sending);
    }

    @Test
    void holesWhoseResendsWereLostAreResentTogetherNotOnePerProbe() {
        // A 64-packet WRITE: packets 8..62 are lost (the newest arrives and is SACKed), then their
        // resends are lost too except those of 30 and 62. Nothing after that shows the holes but
        // the SACK of 62, whose resend left after all of them.
        try (Fabric f =
                new Fabric(41, Fabric.fastLink(), TransportConfig.defaults().withWindowBytes(LEN))) {
            QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.a, LEN, 21);
            int[] base = {-1};
            f.tapAtoB(frame -> {
                if (base[0] < 0) {
                    base[0] = Fabric.psn(frame);
                }
            });
            f.dropAtoB(dropNth(base, (p, n) -> p >= 8 && p <= 62 && (n == 1 || n == 2 && p != 30 && p != 62)));
            long start = f.scheduler.nowNs();
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            // Each hole went three times at most: lost, lost, delivered; no probe walked them one by one.
            assertThat(qp[0].counters().tailProbes).isLessThanOrEqualTo(1);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isLessThanOrEqualTo(2 * 55);
            assertThat(f.scheduler.nowNs() - start).isLessThan(100_000);
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aRoundTripThatGrowsPastTheProbeTimeIsLearntNotProbedAtEveryPacket(RecoveryMode mode) {
        OnePacketWindow[] cc = {null};
        try (Fabric f = new Fabric(42, Fabric.fastLink(), OnePacketWindow.config(cc))) {
            QueuePair[] qp = connect(f, mode);
            warmUp(f, qp[0]);
            // The ACKs now wait 60 µs more (a queue on the way back): 70 µs round trips, seven times
            // the ones learnt, still under the 100 µs RTO floor. No packet is lost.
            f.ba.faults(FaultConfig.NONE.withDelay(60_000, 0));
            byte[] data = RecoveryOps.fill(f.a, LEN, 22);
            long probesBefore = qp[0].counters().tailProbes;
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 100_000_000L);
            long probes = qp[0].counters().tailProbes - probesBefore;
            // The first packets are probed while the round trip is unknown; the duplicate ACKs
            // those probes draw show the originals arrived, so the longer round trip is learnt.
            assertThat(probes).isBetween(1L, 3L);
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(probes);
            assertThat(qp[0].counters().timeouts).isZero();
            // Congestion control heard of each probe (its send-time log must know the resends).
            assertThat(cc[0].resends).isEqualTo((int) probes);
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }
}
