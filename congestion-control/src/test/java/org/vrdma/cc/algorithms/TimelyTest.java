package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.FlowContext;

class TimelyTest {
    private static final long LINE = 100_000_000_000L;
    private static final FlowContext FLOW = FlowContext.of(LINE, 10_000, 4096, 1);

    /** A TIMELY whose previous RTT is {@code firstRttNs}, at line rate. */
    private static Timely timelyAfter(final long firstRttNs) {
        final Timely cc = new Timely(FLOW, new Timely.Config());
        cc.onPacketSent(0, 4096);
        cc.onAck(1_000, 4096, firstRttNs, false);
        return cc;
    }

    @Test
    void backsOffWhenGradientIsPositiveAboveTlow() {
        final Timely cc = timelyAfter(60_000);
        cc.onRttSample(80_000);
        // rttDiff = 0.875 * 20 µs; gradient = 17.5 / 20 = 0.875; rate * (1 - 0.8 * 0.875).
        assertThat(cc.gradient()).isCloseTo(0.875, within(1e-12));
        assertThat((double) cc.rateBps()).isCloseTo(LINE * (1 - 0.8 * 0.875), within(1.0));
    }

    @Test
    void multiplicativeDecreaseAboveThigh() {
        final Timely cc = timelyAfter(600_000);
        cc.onRttSample(600_000);
        assertThat((double) cc.rateBps()).isCloseTo(LINE * (1 - 0.8 * (1 - 500.0 / 600)), within(1.0));
    }

    @Test
    void additiveIncreaseBelowTlowEvenWithRisingRtt() {
        final Timely cc = timelyAfter(60_000);
        cc.onRttSample(80_000);
        final long cut = cc.rateBps();
        cc.onRttSample(30_000);
        cc.onRttSample(45_000);
        assertThat(cc.rateBps()).isEqualTo(cut + 2 * 10_000_000);
    }

    @Test
    void hyperactiveIncreaseAfterFiveNonPositiveGradients() {
        final Timely cc = timelyAfter(200_000);
        cc.onRttSample(300_000); // steep positive gradient: down to the minimum rate
        long previous = cc.rateBps();
        final long[] expectedSteps = {10_000_000, 10_000_000, 10_000_000, 10_000_000, 50_000_000, 50_000_000};
        long rtt = 300_000;
        for (int i = 0; i < expectedSteps.length; i++) {
            rtt -= 40_000; // falling RTT inside [Tlow, Thigh]: gradient < 0
            cc.onRttSample(rtt);
            assertThat(cc.gradient()).isNegative();
            assertThat(cc.rateBps() - previous).as("step %d", i).isEqualTo(expectedSteps[i]);
            previous = cc.rateBps();
        }
    }

    @Test
    void keepsUpdatingOncePerRoundAfterGoBackNRetransmissions() {
        final Timely cc = new Timely(FLOW, new Timely.Config());
        for (int i = 0; i < 10; i++) {
            cc.onPacketSent(i, 1_000);
        }
        cc.onAck(10_000, 1_000, 60_000, false); // reference; the round would end beyond byte 10 000
        cc.onLoss(11_000, 9_000); // NAK: go back to byte 1 000
        assertThat(cc.rateBps()).as("delay-based: no cut on loss").isEqualTo(LINE);
        for (int i = 0; i < 10; i++) {
            cc.onPacketSent(12_000 + i, 1_000); // 9 re-sent, 1 new
        }
        // The ACK of the first re-sent packet ends the round: it was sent after the reference.
        cc.onAck(20_000, 1_000, 80_000, false);
        assertThat(cc.rateBps()).isLessThan(LINE);
        final long cut = cc.rateBps();
        for (int i = 1; i < 10; i++) {
            cc.onAck(20_000 + i, 1_000, 80_000, false); // same round
        }
        assertThat(cc.rateBps()).isEqualTo(cut);
    }

    @Test
    void keepsUpdatingAfterATimeout() {
        final Timely cc = new Timely(FLOW, new Timely.Config());
        for (int i = 0; i < 5; i++) {
            cc.onPacketSent(i, 1_000);
        }
        cc.onAck(10_000, 1_000, 60_000, false);
        cc.onTimeout(500_000); // everything from byte 1 000 goes again
        assertThat(cc.rateBps()).isEqualTo(LINE); // delay-based: no cut on a timeout
        for (int i = 0; i < 5; i++) {
            cc.onPacketSent(500_000 + i, 1_000);
        }
        for (int i = 0; i < 5; i++) {
            cc.onAck(510_000 + i, 1_000, 80_000, false);
        }
        assertThat(cc.rateBps()).isLessThan(LINE);
    }

    @Test
    void updatesOncePerRoundTripOfData() {
        final Timely cc = new Timely(FLOW, new Timely.Config());
        for (int i = 0; i < 4; i++) {
            cc.onPacketSent(i, 1_000);
        }
        cc.onAck(10_000, 1_000, 60_000, false); // first sample: reference only
        cc.onAck(11_000, 1_000, 80_000, false); // acknowledges data sent before the reference: ignored
        assertThat(cc.rateBps()).isEqualTo(LINE);
        cc.onAck(12_000, 1_000, 80_000, false);
        cc.onAck(13_000, 1_000, 80_000, false);
        assertThat(cc.rateBps()).isEqualTo(LINE);
        cc.onPacketSent(14_000, 1_000);
        cc.onAck(20_000, 1_000, 80_000, false); // beyond what was sent at the reference: update
        assertThat(cc.rateBps()).isLessThan(LINE);
    }

    @Test
    void neverBelowMinRate() {
        final Timely cc = timelyAfter(60_000);
        for (int i = 0; i < 50; i++) {
            cc.onRttSample(1_000_000L * (i + 1));
        }
        assertThat(cc.rateBps()).isEqualTo(100_000_000L);
    }
}
