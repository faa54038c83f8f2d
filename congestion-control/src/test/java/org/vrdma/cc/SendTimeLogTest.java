package org.vrdma.cc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SendTimeLogTest {
    private static final int MTU = 4096;

    @Test
    void theRttIsThatOfThePacketThatTriggeredTheAck() {
        // Four packets paced 330 µs apart; the receiver ACKs the fourth 5 µs after it left. The
        // transport sampled the first: 995 µs, of which 990 µs was the sender's own pacing.
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < 4; i++) {
            log.onSent(i * 330_000L);
        }
        assertThat(log.onAck(995_000, 4L * MTU, 995_000)).isEqualTo(5_000);
    }

    @Test
    void aSampleOfTheTriggeringPacketItselfIsKept() {
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < 8; i++) {
            log.onSent(i * 1_000L);
        }
        assertThat(log.onAck(9_000, 4L * MTU, 6_000)).as("sample of packet 3").isEqualTo(6_000);
        assertThat(log.onAck(14_000, 4L * MTU, 7_000)).as("sample of packet 7").isEqualTo(7_000);
    }

    @Test
    void packetsInFlightAfterTheTriggerDoNotCount() {
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < 20; i++) {
            log.onSent(i * 1_000L);
        }
        // ACK of packets 0..3 at 40 µs; packets 4..19 are still in flight. Sample: packet 0.
        assertThat(log.onAck(40_000, 4L * MTU, 40_000)).isEqualTo(37_000);
    }

    @Test
    void withoutASampleOrWithAForeignOneTheTransportsValueStands() {
        final SendTimeLog log = new SendTimeLog(MTU);
        log.onSent(0);
        log.onSent(1_000);
        assertThat(log.onAck(10_000, MTU, -1)).isEqualTo(-1);
        assertThat(log.onAck(11_000, MTU, 4_321))
                .as("no packet left 4 321 ns ago")
                .isEqualTo(4_321);
    }

    @Test
    void afterATimeoutTheResentTriggerIsUsed() {
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < 4; i++) {
            log.onSent(i * 1_000L); // all lost
        }
        log.onTimeout();
        for (int i = 0; i < 4; i++) {
            log.onSent(500_000 + i * 1_000L); // the same four again
        }
        assertThat(log.onAck(510_000, 4L * MTU, 10_000)).isEqualTo(7_000);
    }

    @Test
    void goBackNRetransmissionsAreAnchoredByTheNextSample() {
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < 8; i++) {
            log.onSent(i * 1_000L);
        }
        log.onAck(10_000, 2L * MTU, -1); // 0, 1 arrived; 2 was lost, 3..7 dropped by the receiver
        log.onLoss();
        for (int i = 0; i < 6; i++) {
            log.onSent(20_000 + i * 1_000L); // NAK: 2..7 again
        }
        log.onSent(26_000); // 8, new: sampled
        log.onSent(27_000); // 9
        // ACK of 2..9 triggered by 9 (sent at 27 µs) at 30 µs; the sample is packet 8.
        assertThat(log.onAck(30_000, 8L * MTU, 4_000)).isEqualTo(3_000);
    }

    @Test
    void neverAboveTheTransportsSampleNorNegative() {
        final SendTimeLog log = new SendTimeLog(MTU);
        for (int i = 0; i < SendTimeLog.CAPACITY * 3; i++) {
            log.onSent(i * 100L);
            if (i % 3 == 2) {
                final long now = i * 100L + 50;
                final long rtt = log.onAck(now, 3L * MTU, now - (i - 2) * 100L);
                assertThat(rtt).isBetween(0L, now - (i - 2) * 100L);
            }
        }
        assertThatThrownBy(() -> new SendTimeLog(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
