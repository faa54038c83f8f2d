package org.vrdma.cc;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class PacerTest {
    @Test
    void spacesPacketsExactlyWithoutDriftOverAMillionPackets() {
        // 4096 B at 3 Gbit/s is 10922.666.. ns: not a whole number of ns or ps.
        final long rateBps = 3_000_000_000L;
        final int bytes = 4096;
        final Pacer pacer = new Pacer(rateBps, 0);
        long nowNs = 0;
        for (long k = 0; k < 1_000_000; k++) {
            final long departureNs = pacer.earliestDepartureNs(nowNs, bytes);
            // Ideal departure of packet k is k * bytes * 8 / rate seconds; we may only round up, by < 1 ns.
            final long idealCeilNs = BigInteger.valueOf(k * bytes * 8L)
                    .multiply(BigInteger.valueOf(1_000_000_000L))
                    .add(BigInteger.valueOf(rateBps - 1))
                    .divide(BigInteger.valueOf(rateBps))
                    .longValueExact();
            assertThat(departureNs).as("packet %d", k).isEqualTo(idealCeilNs);
            pacer.onSent(departureNs, bytes);
            nowNs = departureNs;
        }
    }

    @Test
    void spacingIsBytesTimesEightOverRate() {
        final Pacer pacer = new Pacer(100_000_000_000L, 0);
        pacer.onSent(1_000, 1_250); // 100 ns at 100 Gbit/s
        assertThat(pacer.earliestDepartureNs(1_000, 1_250)).isEqualTo(1_100);
        assertThat(pacer.canSend(1_099, 1_250)).isFalse();
        assertThat(pacer.canSend(1_100, 1_250)).isTrue();
    }

    @Test
    void idleFlowRestartsScheduleAtItsDeparture() {
        final Pacer pacer = new Pacer(8_000_000_000L, 0); // 1 byte per ns
        pacer.onSent(0, 1_000);
        assertThat(pacer.earliestDepartureNs(5_000, 1_000)).isEqualTo(5_000);
        pacer.onSent(5_000, 1_000);
        assertThat(pacer.earliestDepartureNs(5_000, 1_000)).isEqualTo(6_000);
    }

    @Test
    void burstLetsBytesGoBackToBackThenPaces() {
        final Pacer pacer = new Pacer(8_000_000_000L, 3_000);
        long nowNs = 10_000;
        for (int i = 0; i < 4; i++) {
            assertThat(pacer.earliestDepartureNs(nowNs, 1_000))
                    .as("packet %d", i)
                    .isEqualTo(nowNs);
            pacer.onSent(nowNs, 1_000);
        }
        // 4000 bytes charged at 1 B/ns from 10 µs, minus a 3000-byte burst: next at 11 µs.
        assertThat(pacer.earliestDepartureNs(nowNs, 1_000)).isEqualTo(11_000);
    }

    @Test
    void rateChangeTakesEffectImmediately() {
        final Pacer pacer = new Pacer(8_000_000_000L, 0);
        pacer.onSent(0, 10_000); // owes 10 µs at 1 B/ns
        pacer.rateBps(2_000, 16_000_000_000L); // 8 µs still owed at the old rate: 4 µs at the new
        assertThat(pacer.earliestDepartureNs(2_000, 1)).isEqualTo(6_000);
        pacer.rateBps(2_000, 16_000_000_000L); // unchanged rate: no-op
        assertThat(pacer.earliestDepartureNs(2_000, 1)).isEqualTo(6_000);
        pacer.rateBps(4_000, 4_000_000_000L); // 2 µs owed at 2 B/ns: 8 µs at 0.5 B/ns
        assertThat(pacer.earliestDepartureNs(4_000, 1)).isEqualTo(12_000);
    }

    @Test
    void windowAllowsOnePacketEvenWhenSmallerThanIt() {
        final TxWindow window = new TxWindow();
        window.windowBytes(1_000);
        assertThat(window.allows(4_000)).isTrue();
        window.onSent(4_000);
        assertThat(window.allows(1)).isFalse();
        window.onAcked(4_000);
        assertThat(window.allows(1_000)).isTrue();
        window.onSent(600);
        assertThat(window.allows(400)).isTrue();
        assertThat(window.allows(401)).isFalse();
    }
}
