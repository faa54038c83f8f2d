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

    /**
     * A queue above Kmax marks every packet, so a flow gets a CNP per 50 µs interval and, with alpha
     * near 1, halves each time: eight cuts take 100 Gbit/s to 0.39 Gbit/s, as traced for the slowest
     * flows of a leaf-spine lab. Once the CNPs stop, the default increase steps must bring the flow back
     * within milliseconds; with Rai = 5 Mbit/s and a 10 MB byte counter it crawled below 1 Gbit/s.
     */
    @Test
    void flowCutToUnderOneGigabitRecoversWithinMillisecondsOnDefaults() {
        final Dcqcn cc = new Dcqcn(FLOW, new Dcqcn.Config());
        assertThat(cc.raiBps()).isEqualTo(20_000_000.0);
        assertThat(cc.rhaiBps()).isEqualTo(200_000_000.0);
        final long lastCutNs = cutEightTimes(cc);
        assertThat(cc.rateBps()).isLessThan(400_000_000L);

        final long twoMsNs = lastCutNs + 2_000_000;
        sendAtRateUntil(cc, lastCutNs, twoMsNs, 0);
        assertThat(cc.rateBps()).as("2 ms after the last cut").isGreaterThan(25_000_000_000L);
        sendAtRateUntil(cc, twoMsNs, lastCutNs + 5_000_000, 0);
        assertThat(cc.rateBps()).as("5 ms after the last cut").isEqualTo(LINE);
    }

    /** The crawl the defaults replace, kept reachable by configuration: the ConnectX steps and B = 10 MB. */
    @Test
    void connectXStepsWithTheByteCounterStillCrawl() {
        final Dcqcn cc = new Dcqcn(
                FLOW, new Dcqcn.Config().raiBps(5_000_000).rhaiBps(50_000_000).byteCounterBytes(10L << 20));
        final long lastCutNs = cutEightTimes(cc);
        sendAtRateUntil(cc, lastCutNs, lastCutNs + 5_000_000, 0);
        assertThat(cc.byteStage()).isZero();
        assertThat(cc.rateBps()).isBetween(800_000_000L, 1_300_000_000L);
    }

    /**
     * Go-back-N after fabric loss: NAKs, a timeout and the re-sent bytes during recovery leave the
     * recovery exactly as it is without loss (the byte counter, off by default, counts re-sent bytes).
     */
    @Test
    void lossDuringRecoveryChangesNothing() {
        final Dcqcn clean = new Dcqcn(FLOW, new Dcqcn.Config());
        final Dcqcn lossy = new Dcqcn(FLOW, new Dcqcn.Config());
        final long lastCutNs = cutEightTimes(clean);
        cutEightTimes(lossy);
        for (long t = lastCutNs; t < lastCutNs + 3_000_000; t += 100_000) {
            sendAtRateUntil(clean, t, t + 100_000, 0);
            sendAtRateUntil(lossy, t, t + 100_000, 7);
            assertThat(lossy.rateBps()).as("at %d ns", t + 100_000).isEqualTo(clean.rateBps());
            assertThat(lossy.timerStage()).isEqualTo(clean.timerStage());
            assertThat(lossy.alpha()).isEqualTo(clean.alpha());
        }
    }

    /** CNPs every 50 µs, each applied as the cut interval ends; returns the time of the last cut. */
    private static long cutEightTimes(final Dcqcn cc) {
        long nowNs = 1_000;
        for (int i = 0; i < 8; i++) {
            cc.onCnp(nowNs);
            nowNs += 50_000;
        }
        return nowNs - 50_000;
    }

    /**
     * Sends 4 KiB packets at the flow's current rate from {@code fromNs} to {@code toNs}, firing the
     * algorithm's timer when due; every {@code lossEvery}-th packet (0: none) is NAKed and re-sent, and
     * every tenth loss is a timeout.
     */
    private static void sendAtRateUntil(final Dcqcn cc, final long fromNs, final long toNs, final int lossEvery) {
        long nowNs = fromNs;
        int packets = 0;
        int losses = 0;
        for (int i = 0; i < 10_000_000 && nowNs < toNs; i++) {
            final long gapNs = Math.max(1, 4096L * 8_000_000_000L / cc.rateBps());
            final long nextSendNs = nowNs + gapNs;
            final long timerNs = cc.nextTimerNs();
            if (timerNs <= nextSendNs && timerNs < toNs) {
                nowNs = Math.max(nowNs, timerNs);
                cc.onTimer(nowNs);
                continue;
            }
            nowNs = nextSendNs;
            if (nowNs >= toNs) {
                break;
            }
            cc.onPacketSent(nowNs, 4096);
            packets++;
            if (lossEvery > 0 && packets % lossEvery == 0) {
                if (++losses % 10 == 0) {
                    cc.onTimeout(nowNs);
                } else {
                    cc.onLoss(nowNs, 4096);
                }
                cc.onPacketSent(nowNs, 4096); // the re-sent packet
            }
        }
    }
}
