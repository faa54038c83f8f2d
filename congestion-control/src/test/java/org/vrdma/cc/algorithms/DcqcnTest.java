package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;

class DcqcnTest {
    private static final long LINE = 100_000_000_000L;
    private static final FlowContext FLOW = FlowContext.of(LINE, 10_000, 4096, 1);
    private static final double G = 1.0 / 256;

    @Test
    void firstCnpHalvesTheRateBecauseAlphaStartsAtOne() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config());
        assertThat(cc.rateBps()).isEqualTo(LINE);
        assertThat(cc.nextTimerNs()).isEqualTo(CongestionControl.NO_TIMER);

        cc.onCnp(1_000);

        assertThat(cc.rateBps()).isEqualTo(LINE / 2);
        assertThat(cc.targetRateBps()).isEqualTo(LINE);
        assertThat(cc.alpha()).isEqualTo(1.0);
        assertThat(cc.nextTimerNs()).isEqualTo(1_000 + 55_000);
    }

    @Test
    void lossAndTimeoutsLeaveRateAlphaAndTimersAlone() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config());
        cc.onLoss(0, 40_960);
        cc.onTimeout(1_000);
        assertThat(cc.rateBps()).isEqualTo(LINE);
        assertThat(cc.nextTimerNs()).isEqualTo(CongestionControl.NO_TIMER);

        cc.onCnp(2_000);
        final long cut = cc.rateBps();
        final long timerNs = cc.nextTimerNs();
        cc.onLoss(3_000, 40_960);
        cc.onTimeout(4_000);
        assertThat(cc.rateBps()).isEqualTo(cut);
        assertThat(cc.targetRateBps()).isEqualTo(LINE);
        assertThat(cc.alpha()).isEqualTo(1.0);
        assertThat(cc.nextTimerNs()).isEqualTo(timerNs);
    }

    @Test
    void laterCnpCutsByAlphaOverTwo() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config().byteCounterBytes(0));
        cc.onCnp(0);
        final long before = cc.rateBps();
        // The rate-increase timer fired at 55 µs (fast recovery: Rc = (Rt + Rc) / 2).
        cc.onTimer(55_000);
        final long recovered = cc.rateBps();
        assertThat(recovered).isEqualTo((LINE + before) / 2);

        cc.onCnp(60_000);

        // One alpha period without CNP ended at 55 µs: alpha = (1 - g).
        final double alpha = 1 - G;
        assertThat(cc.alpha()).isCloseTo(alpha, within(1e-12));
        assertThat(cc.rateBps()).isEqualTo((long) (recovered * (1 - alpha / 2)));
        assertThat(cc.targetRateBps()).isEqualTo(recovered);
    }

    @Test
    void cutsAtMostOncePerInterval() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config());
        cc.onCnp(0);
        final long afterFirst = cc.rateBps();
        cc.onCnp(10_000);
        cc.onCnp(20_000);
        assertThat(cc.rateBps()).isEqualTo(afterFirst);
        assertThat(cc.nextTimerNs()).isEqualTo(50_000);

        cc.onTimer(50_000);

        assertThat(cc.rateBps()).isLessThan(afterFirst);
        assertThat(cc.nextTimerNs()).isEqualTo(50_000 + 55_000);
    }

    @Test
    void alphaDecaysWithoutCnpsAndRisesWithThem() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config().g(1.0 / 16));
        cc.onCnp(0);
        cc.onTimer(100 * 55_000L);
        final double decayed = cc.alpha();
        assertThat(decayed).isCloseTo(Math.pow(15.0 / 16, 100), within(1e-12));

        double previous = decayed;
        long nowNs = 100 * 55_000L;
        for (int period = 0; period < 10; period++) {
            cc.onCnp(nowNs + 1_000);
            nowNs += 55_000;
            cc.onTimer(nowNs);
            assertThat(cc.alpha()).as("period %d", period).isGreaterThan(previous);
            assertThat(cc.alpha()).isCloseTo(previous * 15 / 16 + 1.0 / 16, within(1e-12));
            previous = cc.alpha();
        }
    }

    @Test
    void recoversThroughFastRecoveryThenAdditiveThenHyperIncrease() {
        final Dcqcn.Config config =
                new Dcqcn.Config().byteCounterBytes(0).raiBps(5_000_000).rhaiBps(50_000_000);
        final Dcqcn cc = new Dcqcn(FLOW, config);
        cc.onCnp(0);
        cc.onCnp(50_000); // a second cut so that Rt is below line rate and increases are visible
        final long targetAfterCut = cc.targetRateBps();
        double rc = cc.rateBps();
        double rt = targetAfterCut;

        for (int stage = 1; stage <= 5; stage++) {
            cc.onTimer(cc.nextTimerNs());
            rc = (rt + rc) / 2;
            assertThat(cc.timerStage()).isEqualTo(stage);
            assertThat(cc.targetRateBps()).as("fast recovery keeps Rt").isEqualTo(targetAfterCut);
            assertThat((double) cc.rateBps()).isCloseTo(rc, within(2.0));
        }
        cc.onTimer(cc.nextTimerNs());
        rt += 5_000_000;
        rc = (rt + rc) / 2;
        assertThat(cc.targetRateBps()).as("additive increase").isEqualTo((long) rt);
        assertThat((double) cc.rateBps()).isCloseTo(rc, within(2.0));

        for (int i = 1; i <= 3; i++) {
            cc.onTimer(cc.nextTimerNs());
            rt = Math.min(LINE, rt + i * 50_000_000.0);
            rc = (rt + rc) / 2;
            assertThat(cc.targetRateBps()).as("hyper increase %d", i).isEqualTo((long) rt);
            assertThat((double) cc.rateBps()).isCloseTo(rc, within(2.0));
        }
    }

    @Test
    void byteCounterAlsoDrivesRecovery() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config().byteCounterBytes(1_000_000));
        cc.onCnp(0);
        final long cut = cc.rateBps();
        for (int i = 0; i < 250; i++) {
            cc.onPacketSent(1_000 + i, 4_000);
        }
        assertThat(cc.byteStage()).isEqualTo(1);
        assertThat(cc.rateBps()).isEqualTo((LINE + cut) / 2);
    }

    @Test
    void returnsToLineRateAndStopsItsTimer() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config().byteCounterBytes(0));
        cc.onCnp(0);
        long nowNs = 0;
        for (int i = 0; i < 10_000 && cc.nextTimerNs() != CongestionControl.NO_TIMER; i++) {
            nowNs = cc.nextTimerNs();
            cc.onTimer(nowNs);
        }
        assertThat(cc.rateBps()).isEqualTo(LINE);
        assertThat(cc.nextTimerNs()).isEqualTo(CongestionControl.NO_TIMER);
        assertThat(nowNs).isLessThan(10_000 * 55_000L);
    }
}
