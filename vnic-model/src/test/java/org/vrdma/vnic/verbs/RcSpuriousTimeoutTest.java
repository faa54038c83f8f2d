package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;

/**
 * Spurious retransmission timeouts, as in HPCC's 32:1 incast: a one-packet window whose round trip
 * jumps past the RTO (a new round's burst queued in front of it) times out although nothing was
 * lost. The ACK of the original and then the duplicate ACK of the resent copy show it, and
 * congestion control hears that the timeout was spurious (Swift undoes its cut). A real loss is not
 * taken for a spurious timeout. Virtual time, 100 Gbit/s, 10 µs round trip, 4 KiB MTU.
 */
class RcSpuriousTimeoutTest {
    private static final int LEN = 64 * 4096;

    private static Fabric fabric(final long seed, final OnePacketWindow[] cc) {
        return new Fabric(seed, Fabric.fastLink(), OnePacketWindow.config(cc));
    }

    private static QueuePair[] connectAndWarmUp(final Fabric f, final RecoveryMode mode) {
        QueuePair[] qp = f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
        RecoveryOps.fill(f.a, LEN, 1);
        RecoveryOps.write(f, qp[0], LEN);
        RecoveryOps.awaitSuccess(f, 1_000_000L);
        f.scheduler.runFor(2_000_000);
        return qp;
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aTimeoutWhoseResendHadArrivedIsReportedSpurious(RecoveryMode mode) {
        OnePacketWindow[] cc = {null};
        try (Fabric f = fabric(51, cc)) {
            QueuePair[] qp = connectAndWarmUp(f, mode);
            // The ACKs now wait 300 µs more: 310 µs round trips, three times the RTO. Nothing is lost.
            f.ba.faults(FaultConfig.NONE.withDelay(300_000, 0));
            byte[] data = RecoveryOps.fill(f.a, LEN, 52);
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 100_000_000L);
            // The first packet times out twice (100 and 200 µs, backed off) before its ACK comes at
            // 310 µs; the duplicate ACK for the resent copy then shows the last timeout spurious, and
            // congestion control hears it. The round trip is learnt: no other packet times out.
            assertThat(qp[0].counters().timeouts).isEqualTo(2);
            assertThat(qp[0].counters().spuriousTimeouts).isEqualTo(1);
            assertThat(cc[0].timeouts).isEqualTo(2);
            assertThat(cc[0].spurious).isEqualTo(1);
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aLostPacketsTimeoutIsNotSpurious(RecoveryMode mode) {
        OnePacketWindow[] cc = {null};
        try (Fabric f = fabric(53, cc)) {
            QueuePair[] qp = connectAndWarmUp(f, mode);
            int[] dropped = {0};
            // The WRITE's first packet is lost, and so is the tail probe's copy: the timeout resends it.
            f.dropAtoB(frame -> dropped[0] < 2 && Fabric.opcode(frame) != 0x11 && ++dropped[0] <= 2);
            byte[] data = RecoveryOps.fill(f.a, LEN, 54);
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 100_000_000L);
            assertThat(qp[0].counters().timeouts).isEqualTo(1);
            assertThat(qp[0].counters().spuriousTimeouts).isZero();
            assertThat(cc[0].spurious).isZero();
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }
}
