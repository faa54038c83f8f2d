package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.FlowContext;

class TimelyTest {
    private static final long LINE = 100_000_000_000L;
    private static final FlowContext FLOW = FlowContext.of(LINE, 10_000, 4096, 1);

    /** The paper's absolute thresholds (10 Gbit/s NICs, 20 µs minimum RTT). */
    private static Timely.Config paper() {
        return new Timely.Config()
                .tLowNs(50_000)
                .tHighNs(500_000)
                .minRttNs(20_000)
                .deltaBps(10_000_000);
    }

    /** Thresholds for a 5 µs path, given explicitly (the same as the path-scaled defaults). */
    private static Timely.Config fiveMicroseconds() {
        return new Timely.Config()
                .tLowNs(12_500)
                .tHighNs(125_000)
                .minRttNs(5_000)
                .deltaBps(100_000_000);
    }

    /** A TIMELY whose previous RTT is {@code firstRttNs}, at line rate. */
    private static Timely timelyAfter(final long firstRttNs) {
        final Timely cc = new Timely(FLOW, paper());
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
        cc.onRttSample(300_000); // steep positive gradient: cut by beta
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
    void oneUpdateCutsByAtMostBeta() {
        final Timely cc = timelyAfter(60_000);
        cc.onRttSample(100_000);
        // gradient = 0.875 * 40 / 20 = 1.75: 1 - beta * gradient would be -0.4, i.e. the floor.
        assertThat(cc.gradient()).isCloseTo(1.75, within(1e-12));
        assertThat((double) cc.rateBps()).isCloseTo(LINE * (1 - 0.8), within(1.0));
    }

    @Test
    void thresholdsFollowThePathByDefault() {
        final Timely cc = new Timely(FlowContext.of(LINE, 5_000, 4096, 1), new Timely.Config());
        assertThat(cc.minRttNs()).isEqualTo(5_000);
        assertThat(cc.tLowNs()).isEqualTo(12_500); // 50/20 of minRtt
        assertThat(cc.tHighNs()).isEqualTo(125_000); // 500/20 of minRtt
        assertThat(cc.deltaBps()).isEqualTo(100_000_000.0); // 10 Mbit/s per 10 Gbit/s
        final Timely explicitLow = new Timely(FlowContext.of(LINE, 5_000, 4096, 1), new Timely.Config().tLowNs(50_000));
        assertThat(explicitLow.tHighNs()).as("kept above a configured Tlow").isEqualTo(500_000);
    }

    @Test
    void rttAboveThighDecreasesWithTheDefaults() {
        final Timely cc = new Timely(FlowContext.of(LINE, 5_000, 4096, 1), new Timely.Config());
        cc.onPacketSent(0, 4096);
        cc.onAck(1_000, 4096, 200_000, false);
        cc.onRttSample(200_000); // flat gradient, but above Thigh = 125 µs
        assertThat(cc.gradient()).isZero();
        assertThat((double) cc.rateBps()).isCloseTo(LINE * (1 - 0.8 * (1 - 125.0 / 200)), within(1.0));
    }

    @Test
    void ackCoalescingAtLowRateIsNotReadAsQueueing() {
        // At the 100 Mbit/s floor four 4 KiB packets take 1 ms to pace out; the receiver ACKs the
        // fourth, so the transport's sample of the first is ~1 ms, above Thigh (125 µs here).
        final Timely cc = new Timely(FlowContext.of(LINE, 5_000, 4096, 1), fiveMicroseconds());
        final CoalescedAckPath path = new CoalescedAckPath(cc, 4096, 58, 4, 5_000, 7);
        path.queueDelayNs(1_000_000).runUntil(12_000_000); // a standing 1 ms queue: to the floor
        assertThat(cc.rateBps()).isEqualTo(100_000_000L);
        path.queueDelayNs(0).runUntil(13_400_000);
        assertThat(path.lastRawSampleNs()).as("the transport's sample").isGreaterThan(cc.tHighNs());
        assertThat(cc.lastRttNs())
                .as("RTT of the packet that triggered the ACK")
                .isLessThan(6_000);
        assertThat(cc.rateBps()).as("+delta per ACK below Tlow").isEqualTo(300_000_000L);
        path.runUntil(16_000_000);
        assertThat(cc.rateBps()).isGreaterThan(1_500_000_000L);
    }

    @Test
    void recoversToNearLineRateAfterALossEpisode() {
        final Timely cc = new Timely(FlowContext.of(LINE, 5_000, 4096, 1), fiveMicroseconds());
        final CoalescedAckPath path = new CoalescedAckPath(cc, 4096, 58, 4, 5_000, 11);
        // A 300 µs queue (above Thigh) while the buffer overflows for 100 µs: timeouts, re-sends.
        path.queueDelayNs(300_000).lossEpisode(3_000_000, 3_100_000).runUntil(8_000_000);
        assertThat(cc.rateBps()).isLessThan(LINE / 100);
        // A floor-locked TIMELY (samples inflated by ACK coalescing, rounds stretched by header
        // bytes) stays at 100 Mbit/s here with no goodput at all.
        path.queueDelayNs(0).runUntil(30_000_000);
        assertThat(cc.rateBps()).isGreaterThan(LINE * 9 / 10);
        final long before = path.bytesAcked();
        path.runUntil(31_000_000);
        assertThat((path.bytesAcked() - before) * 8e9 / 1_000_000)
                .as("goodput bit/s")
                .isGreaterThan(0.85 * LINE);
    }

    @Test
    void keepsUpdatingOncePerRoundAfterGoBackNRetransmissions() {
        final Timely cc = new Timely(FLOW, paper());
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
        final Timely cc = new Timely(FLOW, paper());
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
        final Timely cc = new Timely(FLOW, paper());
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
