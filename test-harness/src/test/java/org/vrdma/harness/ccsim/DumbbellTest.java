package org.vrdma.harness.ccsim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.vrdma.cc.ConfiguredAlgorithm;
import org.vrdma.cc.CongestionControls;

/** Dumbbell experiments in virtual time: 100 Gbit/s, base RTT about 4.7 µs. */
class DumbbellTest {
    private static ConfiguredAlgorithm algorithm(final String name) {
        return CongestionControls.defaults().configure(name, CcComparison.ALGORITHMS.get(name));
    }

    @ParameterizedTest
    @ValueSource(strings = {"dcqcn", "timely", "swift", "hpcc", "dctcp"})
    void twoLongFlowsConvergeToAFairShareWithin10Ms(final String name) {
        final Dumbbell net = new Dumbbell(CcComparison.shape(name, 1));
        net.addFlow(algorithm(name), 0, Long.MAX_VALUE);
        net.addFlow(algorithm(name), CcComparison.Setup.DEFAULT.secondFlowStartNs(), Long.MAX_VALUE);
        net.runUntil(10_000_000);

        assertThat(net.jainIndex(8_000_000, 10_000_000)).isGreaterThanOrEqualTo(0.95);
        assertThat(net.aggregateThroughputBps(8_000_000, 10_000_000)).isGreaterThan(50e9);
    }

    @ParameterizedTest
    @ValueSource(strings = {"swift", "hpcc", "dctcp"})
    void incastKeepsTheQueueBoundedWithoutLoss(final String name) {
        final Dumbbell net = new Dumbbell(CcComparison.shape(name, 1));
        for (int i = 0; i < 16; i++) {
            net.addFlow(algorithm(name), 0, 1_000_000);
        }
        assertThat(net.runUntilCompleted(50_000_000)).isTrue();

        assertThat(net.drops()).isZero();
        assertThat(net.maxQueueBytes()).isLessThan(net.config().bufferBytes());
        assertThat(net.queuePercentileBytes(99)).isLessThan(1_000_000);
        for (int i = 0; i < 16; i++) {
            assertThat(net.deliveredBytes(i)).isEqualTo(1_000_000);
        }
    }

    static Stream<String> algorithms() {
        return CcComparison.ALGORITHMS.keySet().stream();
    }

    @ParameterizedTest
    @MethodSource("algorithms")
    void incastCompletesWithEveryLossRecovered(final String name) {
        final Dumbbell net = new Dumbbell(CcComparison.shape(name, 1));
        for (int i = 0; i < 16; i++) {
            net.addFlow(algorithm(name), 0, 1_000_000);
        }
        assertThat(net.runUntilCompleted(CcComparison.Setup.DEFAULT.incastDeadlineNs()))
                .isTrue();

        assertThat(net.maxQueueBytes()).isLessThanOrEqualTo(net.config().bufferBytes());
        for (int i = 0; i < 16; i++) {
            assertThat(net.deliveredBytes(i)).isEqualTo(1_000_000);
        }
    }

    @Test
    void retransmissionTimeoutBacksOffWhileNothingGetsThrough() {
        final DumbbellConfig base = DumbbellConfig.hundredGig(1);
        final DumbbellConfig blackHole = new DumbbellConfig(
                base.lineRateBps(),
                base.linkDelayNs(),
                base.mtuBytes(),
                1, // every packet is dropped
                base.marker(),
                base.cnpIntervalNs(),
                500_000,
                1);
        final Dumbbell net = new Dumbbell(blackHole);
        net.addFlow(algorithm("static"), 0, 1_000_000);
        net.runUntil(10_000_000);
        // Timeouts at 0.5, 1.5, 3.5 and 7.5 ms: the timeout doubles while nothing is acknowledged.
        assertThat(net.timeouts()).isEqualTo(4);
        assertThat(net.deliveredBytes(0)).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"hpcc"})
    void sameSeedSameRun(final String name) {
        final double[] jain = new double[2];
        for (int run = 0; run < 2; run++) {
            final Dumbbell net = new Dumbbell(CcComparison.shape(name, 7));
            net.addFlow(algorithm(name), 0, Long.MAX_VALUE);
            net.addFlow(algorithm(name), 500_000, Long.MAX_VALUE);
            net.runUntil(2_000_000);
            jain[run] = net.jainIndex(1_000_000, 2_000_000);
        }
        assertThat(jain[0]).isEqualTo(jain[1]);
    }
}
