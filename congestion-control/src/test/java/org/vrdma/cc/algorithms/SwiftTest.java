package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.IntTelemetry;

class SwiftTest {
    private static final long LINE = 100_000_000_000L;
    private static final int MTU = 4096;
    private static final FlowContext FLOW = FlowContext.of(LINE, 10_000, MTU, 1);

    @Test
    void targetGrowsAsCwndShrinksAndWithHops() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        final double atStart = cc.targetDelayNs();
        assertThat(atStart).isGreaterThan(10_000 + 1_000).isLessThan(10_000 + 1_000 + 50_000);
        cc.onInt(0, new IntTelemetry().reset());
        final IntTelemetry threeHops = new IntTelemetry();
        threeHops.addHop(0, 0, 0, LINE);
        threeHops.addHop(0, 0, 0, LINE);
        threeHops.addHop(0, 0, 0, LINE);
        cc.onInt(0, threeHops);
        assertThat(cc.targetDelayNs()).isCloseTo(atStart + 2_000, within(1e-6));

        cc.onTimeout(1_000_000);
        assertThat(cc.targetDelayNs()).isGreaterThan(atStart + 2_000);
    }

    @Test
    void decreasesAboveTargetAtMostOncePerRtt() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        final double cwnd0 = cc.cwndPackets();
        final double target = cc.targetDelayNs();
        final long delay = 20_000;

        cc.onAck(100_000, MTU, delay, false);

        final double expected = cwnd0 * Math.max(1 - 0.8 * (delay - target) / delay, 0.5);
        assertThat(cc.cwndPackets()).isCloseTo(expected, within(1e-9));
        cc.onAck(100_000 + delay - 1, MTU, delay, false);
        assertThat(cc.cwndPackets()).as("same RTT").isCloseTo(expected, within(1e-9));
        cc.onAck(100_000 + delay, MTU, delay, false);
        assertThat(cc.cwndPackets()).as("next RTT").isLessThan(expected);
    }

    @Test
    void decreaseIsBoundedByMaxMdf() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        final double cwnd0 = cc.cwndPackets();
        cc.onAck(100_000, MTU, 10_000_000, false);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd0 * 0.5, within(1e-9));
    }

    @Test
    void increasesAdditivelyBelowTarget() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        cc.onAck(100_000, MTU, 10_000_000, false); // halve first, so there is room to grow
        final double cwnd = cc.cwndPackets();
        cc.onAck(200_000, 2L * MTU, 10_500, false);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd + 1.0 * 2 / cwnd, within(1e-9));
    }

    @Test
    void pacesBelowOnePacket() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        long nowNs = 0;
        for (int i = 0; i < 12; i++) {
            nowNs += 1_000_000;
            cc.onAck(nowNs, MTU, 1_000_000, false);
        }
        assertThat(cc.cwndPackets()).isLessThan(1);
        assertThat(cc.windowBytes()).isPositive().isLessThan(MTU);
        // One packet every rtt / cwnd.
        final double expectedBps = cc.cwndPackets() * MTU * 8e9 / 1_000_000;
        assertThat((double) cc.rateBps()).isCloseTo(expectedBps, within(1.0));
    }

    @Test
    void lossCutsByMaxMdfAndRepeatedTimeoutsResetToMinimum() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        final double cwnd0 = cc.cwndPackets();
        cc.onLoss(100_000, MTU);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd0 / 2, within(1e-9));
        for (int i = 1; i <= Swift.RETX_RESET_THRESHOLD; i++) {
            cc.onTimeout(100_000 + i * 1_000_000L);
        }
        assertThat(cc.cwndPackets()).isEqualTo(0.001);
    }

    @Test
    void belowOnePacketTheAckCoalescingDelayIsNotQueueing() {
        final Swift cc = new Swift(FlowContext.of(LINE, 5_000, MTU, 1), new Swift.Config());
        for (int i = 0; i < Swift.RETX_RESET_THRESHOLD; i++) {
            cc.onTimeout(i);
        }
        final double cwnd0 = cc.cwndPackets();
        assertThat(cwnd0).isLessThan(0.01);
        final long gapNs = (long) (MTU * 8e9 / cc.rateBps()); // paced: rtt / cwnd apart
        assertThat(gapNs).isGreaterThan(1_000_000);
        // Two paced packets, ACKed together when the second arrives 5 µs after it left: the
        // transport's sample of the first holds the whole pacing gap.
        cc.onPacketSent(10_000_000, MTU);
        cc.onPacketSent(10_000_000 + gapNs, MTU);
        final long ackNs = 10_000_000 + gapNs + 5_000;
        cc.onAck(ackNs, 2L * MTU, ackNs - 10_000_000, false);
        assertThat(cc.cwndPackets()).as("5 µs is below the target: increase").isGreaterThan(cwnd0);
        assertThat(cc.rateBps()).as("pacing interval from the 5 µs RTT").isGreaterThan((long) (MTU * 8e9 / gapNs));
    }

    @Test
    void aSpuriousTimeoutUndoesTheTimeoutsCuts() {
        final Swift cc = new Swift(FLOW, new Swift.Config());
        final double cwnd0 = cc.cwndPackets();
        final long rate0 = cc.rateBps();
        // Two timeouts in a row (a delay spike past the RTO, nothing lost): each halves cwnd.
        cc.onTimeout(1_000_000);
        cc.onTimeout(2_000_000);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd0 / 4, within(1e-9));
        // The transport finds the last one spurious: cwnd is back where it was before the first.
        cc.onSpuriousTimeout(2_300_000);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd0, within(1e-9));
        assertThat(cc.rateBps()).isEqualTo(rate0);
        // Only once: a second verdict without a timeout changes nothing, nor does a timeout's undo
        // raise a window that grew since.
        cc.onTimeout(5_000_000);
        cc.onSpuriousTimeout(5_300_000);
        cc.onSpuriousTimeout(5_400_000);
        assertThat(cc.cwndPackets()).isCloseTo(cwnd0, within(1e-9));
    }
}
