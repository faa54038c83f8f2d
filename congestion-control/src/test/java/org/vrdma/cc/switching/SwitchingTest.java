package org.vrdma.cc.switching;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.IntTelemetry;

class SwitchingTest {
    @Test
    void redMarksNothingBelowKminLinearlyBetweenAndEverythingAboveKmax() {
        final RedEcnMarker red = new RedEcnMarker(100_000, 400_000, 0.2);
        assertThat(red.markProbability(100_000)).isZero();
        assertThat(red.markProbability(250_000)).isCloseTo(0.1, within(1e-12));
        assertThat(red.markProbability(400_000)).isCloseTo(0.2, within(1e-12));
        assertThat(red.markProbability(400_001)).isEqualTo(1.0);

        final SplittableRandom random = new SplittableRandom(42);
        int marked = 0;
        for (int i = 0; i < 100_000; i++) {
            marked += red.shouldMark(250_000, random) ? 1 : 0;
        }
        assertThat(marked / 100_000.0).isCloseTo(0.1, within(0.005));
        assertThat(red.shouldMark(50_000, random)).isFalse();
        assertThat(red.shouldMark(500_000, random)).isTrue();
    }

    @Test
    void stepMarkingIsDctcpsThreshold() {
        final RedEcnMarker step = RedEcnMarker.step(30_000);
        final SplittableRandom random = new SplittableRandom(1);
        assertThat(step.shouldMark(30_000, random)).isFalse();
        assertThat(step.shouldMark(30_001, random)).isTrue();
    }

    @Test
    void sameSeedSameMarks() {
        final RedEcnMarker red = new RedEcnMarker(0, 1_000, 0.5);
        final SplittableRandom r1 = new SplittableRandom(7);
        final SplittableRandom r2 = new SplittableRandom(7);
        for (int q = 0; q < 1_000; q++) {
            assertThat(red.shouldMark(q, r1)).isEqualTo(red.shouldMark(q, r2));
        }
    }

    @Test
    void admissionDropsWhatDoesNotFitAndMarksOnlyEcnCapablePackets() {
        final EgressAdmission admission = new EgressAdmission(new TailDrop(10_000), RedEcnMarker.step(4_000));
        final SplittableRandom random = new SplittableRandom(3);
        assertThat(admission.onArrival(1_000, 1_000, true, random)).isEqualTo(EgressAdmission.ENQUEUE);
        assertThat(admission.onArrival(5_000, 1_000, true, random)).isEqualTo(EgressAdmission.ENQUEUE_CE);
        assertThat(admission.onArrival(5_000, 1_000, false, random)).isEqualTo(EgressAdmission.ENQUEUE);
        assertThat(admission.onArrival(9_000, 1_000, true, random)).isEqualTo(EgressAdmission.ENQUEUE_CE);
        assertThat(admission.onArrival(9_001, 1_000, true, random)).isEqualTo(EgressAdmission.DROP);
    }

    @Test
    void intPortStampsItsCountersUpToMaxHops() {
        final IntPort port = new IntPort(100_000_000_000L);
        port.onTransmit(1_500);
        port.onTransmit(500);
        final IntTelemetry telemetry = new IntTelemetry();
        assertThat(port.stamp(telemetry, 777, 3_000)).isTrue();
        assertThat(telemetry.hopCount()).isEqualTo(1);
        assertThat(telemetry.queueBytes(0)).isEqualTo(3_000);
        assertThat(telemetry.txBytes(0)).isEqualTo(2_000);
        assertThat(telemetry.timestampNs(0)).isEqualTo(777);
        assertThat(telemetry.linkRateBps(0)).isEqualTo(100_000_000_000L);
        for (int i = 1; i < IntTelemetry.MAX_HOPS; i++) {
            assertThat(port.stamp(telemetry, 777, 0)).isTrue();
        }
        assertThat(port.stamp(telemetry, 777, 0)).isFalse();
    }
}
