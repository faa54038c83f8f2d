package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.CcConfigException;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.CongestionControls;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.IntTelemetry;

class HpccTest {
    private static final long LINE = 100_000_000_000L;
    private static final long RTT_NS = 10_000;
    private static final int MTU = 1_000;
    private static final FlowContext FLOW = FlowContext.of(LINE, RTT_NS, MTU, 1);

    /**
     * The transport may hand over a larger window (two BDPs in the virtual-time labs); HPCC still
     * starts at one BDP and never grows past it, however far below eta the path runs.
     */
    @Test
    void windowStartsAtAndIsCappedByOneBdpNotTheTransportWindow() {
        final long bdp = FLOW.bdpBytes();
        final FlowContext twoBdp = new FlowContext(LINE, RTT_NS, MTU, 2 * bdp, 1);
        final Hpcc cc = new Hpcc(twoBdp, new Hpcc.Config().raiBps(10_000_000_000L));
        assertThat(cc.windowBytes()).isEqualTo(bdp);
        assertThat(cc.rateBps()).isEqualTo(LINE);
        final IntTelemetry telemetry = new IntTelemetry();
        cc.onPacketSent(0, MTU);
        cc.onAck(0, MTU, -1, false);
        telemetry.reset().addHop(0, 0, 0, LINE);
        cc.onInt(0, telemetry);
        // An idle hop for ten rounds: each round adds W_AI = 12.5 kB, but the window stays at a BDP.
        for (int r = 1; r <= 10; r++) {
            cc.onPacketSent(r * RTT_NS - 1, MTU);
            cc.onAck(r * RTT_NS, MTU, -1, false);
            telemetry.reset().addHop(0, 0, r * RTT_NS, LINE);
            cc.onInt(r * RTT_NS, telemetry);
            assertThat(cc.windowBytes()).isEqualTo(bdp);
            assertThat(cc.referenceWindowBytes()).isEqualTo((double) bdp);
        }
    }

    @Test
    void maxWindowBytesOverridesTheBdpAndIsBoundFromJson() {
        final long bdp = FLOW.bdpBytes();
        final CongestionControl cc = CongestionControls.create("hpcc", "{\"maxWindowBytes\": " + 2 * bdp + "}", FLOW);
        assertThat(cc.windowBytes()).isEqualTo(2 * bdp);
        assertThat(cc.rateBps()).as("the rate stays capped at line rate").isEqualTo(LINE);
        assertThat(CongestionControls.create("hpcc", "{}", FLOW).windowBytes()).isEqualTo(bdp);
        assertThatThrownBy(() -> CongestionControls.create("hpcc", "{\"maxWindowBytes\": -1}", FLOW))
                .isInstanceOf(CcConfigException.class)
                .hasMessageContaining("maxWindowBytes");
    }

    @Test
    void shrinksWindowByUtilisationOverEta() {
        final Hpcc cc = new Hpcc(FLOW, new Hpcc.Config().raiBps(0));
        final IntTelemetry telemetry = new IntTelemetry();
        final long bdp = FLOW.bdpBytes();
        cc.onPacketSent(0, MTU);
        cc.onAck(0, MTU, -1, false);
        telemetry.reset().addHop(0, 0, 0, LINE);
        cc.onInt(0, telemetry);
        // One base RTT later the hop has sent a BDP: it ran at line rate, so U = 1.
        cc.onPacketSent(1, MTU);
        cc.onAck(RTT_NS, MTU, -1, false);
        telemetry.reset().addHop(bdp, bdp, RTT_NS, LINE);
        cc.onInt(RTT_NS, telemetry);
        assertThat(cc.utilisation()).isCloseTo(1.0, within(1e-9)); // queue term uses min(q, previous q) = 0
        assertThat((double) cc.windowBytes()).isCloseTo(bdp * 0.95, within(2.0));
        assertThat((double) cc.rateBps()).isCloseTo(LINE * 0.95, within(LINE * 1e-6));
    }

    @Test
    void growsAdditivelyBelowEtaAndMovesReferenceOncePerRtt() {
        final Hpcc cc = new Hpcc(FLOW, new Hpcc.Config().raiBps(1_000_000_000));
        final IntTelemetry telemetry = new IntTelemetry();
        final long bdp = FLOW.bdpBytes();
        cc.onPacketSent(0, MTU);
        cc.onAck(0, MTU, -1, false);
        cc.onInt(0, telemetry.reset());
        telemetry.addHop(0, 0, 0, LINE);
        cc.onInt(0, telemetry);
        // Half-loaded link: first a full update (Wc moves), then ACKs in the same RTT (Wc stays).
        cc.onPacketSent(1, MTU);
        cc.onAck(RTT_NS, MTU, -1, false);
        telemetry.reset().addHop(0, bdp / 2, RTT_NS, LINE);
        cc.onInt(RTT_NS, telemetry);
        final double wc = cc.referenceWindowBytes();
        // U = 0.5 < eta: the window stays at the (clamped) maximum, a BDP, plus nothing.
        assertThat(wc).isEqualTo((double) bdp);
        cc.onAck(RTT_NS + 100, 0, -1, false);
        telemetry.reset().addHop(bdp / 2, bdp / 2 + 125, RTT_NS + 100, LINE);
        cc.onInt(RTT_NS + 100, telemetry);
        assertThat(cc.referenceWindowBytes()).as("fast reaction keeps Wc").isEqualTo(wc);
    }

    @Test
    void referenceWindowStillMovesOncePerRoundAfterGoBackN() {
        final Hpcc cc = new Hpcc(FLOW, new Hpcc.Config().raiBps(0));
        final IntTelemetry telemetry = new IntTelemetry();
        final long bdp = FLOW.bdpBytes();
        for (int i = 0; i < 10; i++) {
            cc.onPacketSent(i, MTU);
        }
        cc.onAck(0, MTU, -1, false);
        telemetry.reset().addHop(0, 0, 0, LINE);
        cc.onInt(0, telemetry); // reference; the round would end beyond byte 10 MTU
        cc.onLoss(1, 9 * MTU); // NAK: go back to byte 1 MTU
        assertThat(cc.referenceWindowBytes()).as("no cut on loss").isEqualTo((double) bdp);
        for (int i = 0; i < 10; i++) {
            cc.onPacketSent(2 + i, MTU); // 9 re-sent, 1 new: 20 MTU on the wire in total
        }
        // The hop ran at line rate with no queue for one base RTT: U = 1 > eta. The ACK of the first
        // re-sent packet ends the round (it was sent after the reference), so Wc moves.
        cc.onAck(RTT_NS, MTU, -1, false);
        telemetry.reset().addHop(0, RTT_NS * LINE / 8_000_000_000L, RTT_NS, LINE);
        cc.onInt(RTT_NS, telemetry);
        assertThat(cc.referenceWindowBytes()).isCloseTo(bdp * 0.95, within(2.0));
        final double wc = cc.referenceWindowBytes();
        // The rest of the round: fast reactions from Wc, which stays.
        for (int i = 1; i < 10; i++) {
            final long tsNs = RTT_NS + 100L * i;
            cc.onAck(tsNs, MTU, -1, false);
            telemetry.reset().addHop(0, tsNs * LINE / 8_000_000_000L, tsNs, LINE);
            cc.onInt(tsNs, telemetry);
        }
        assertThat(cc.referenceWindowBytes()).isEqualTo(wc);
    }

    /**
     * Two flows share one 100 Gbit/s hop; the hop's INT (queue, tx counter, time) comes back one base
     * RTT later. HPCC must settle with the link busy at about eta and almost no queue.
     */
    @Test
    void holdsUtilisationNearEtaOnASharedLink() {
        final Hpcc a = new Hpcc(FLOW, new Hpcc.Config());
        final Hpcc b = new Hpcc(FLOW, new Hpcc.Config());
        final long stepNs = 100;
        final int delaySteps = (int) (RTT_NS / stepNs);
        final long[] qHistory = new long[delaySteps];
        final long[] txHistory = new long[delaySteps];
        final double[] sentA = new double[delaySteps];
        final double[] sentB = new double[delaySteps];
        final IntTelemetry telemetry = new IntTelemetry();
        double queueBytes = 0;
        double txBytes = 0;
        double busySum = 0;
        double queueSum = 0;
        int samples = 0;
        for (int step = 0; step < 20_000; step++) {
            final long nowNs = step * stepNs;
            final double inA = a.rateBps() * stepNs / 8e9;
            final double inB = b.rateBps() * stepNs / 8e9;
            final double capacity = LINE * stepNs / 8e9;
            final double out = Math.min(capacity, queueBytes + inA + inB);
            queueBytes = queueBytes + inA + inB - out;
            txBytes += out;
            a.onPacketSent(nowNs, (int) Math.round(inA));
            b.onPacketSent(nowNs, (int) Math.round(inB));

            final int slot = step % delaySteps;
            if (step >= delaySteps) {
                telemetry.reset().addHop(qHistory[slot], txHistory[slot], nowNs - RTT_NS, LINE);
                a.onAck(nowNs, Math.round(sentA[slot]), RTT_NS, false);
                a.onInt(nowNs, telemetry);
                b.onAck(nowNs, Math.round(sentB[slot]), RTT_NS, false);
                b.onInt(nowNs, telemetry);
            }
            qHistory[slot] = (long) queueBytes;
            txHistory[slot] = (long) txBytes;
            sentA[slot] = inA;
            sentB[slot] = inB;
            if (step >= 10_000) {
                busySum += out / capacity;
                queueSum += queueBytes;
                samples++;
            }
        }
        final double utilisation = busySum / samples;
        assertThat(utilisation).isBetween(0.90, 1.0);
        assertThat(queueSum / samples).isLessThan(FLOW.bdpBytes() / 2.0);
        assertThat(a.utilisation()).isCloseTo(0.95, within(0.05));
        // Fair: both flows end up within 10% of each other.
        assertThat((double) a.rateBps() / b.rateBps()).isBetween(0.9, 1.1);
    }
}
