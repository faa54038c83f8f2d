package org.vrdma.harness.ccsim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.algorithms.StaticRate;
import org.vrdma.runtime.VirtualTimeScheduler;

/** The bottleneck's queue, serialisation and INT stamping. */
class BottleneckPortTest {
    private static final DumbbellConfig SHAPE = DumbbellConfig.hundredGig(1);
    private static final long SERIALISATION_PS = 4_096 * 8_000_000_000_000L / SHAPE.lineRateBps();

    private final VirtualTimeScheduler scheduler = new VirtualTimeScheduler(1);
    private final BottleneckPort port = new BottleneckPort(scheduler, SHAPE);
    private final FlowSender flow = new FlowSender(
            scheduler,
            SHAPE,
            port,
            new StaticRate(FlowContext.of(SHAPE.lineRateBps(), SHAPE.baseRttNs(), 4_096, 1), new StaticRate.Config()),
            Long.MAX_VALUE);

    private SimPacket arriveAt(final long atNs, final long seq) {
        final SimPacket packet = new SimPacket(flow, seq, 4_096, 0);
        scheduler.scheduleAt(atNs, (t, id) -> port.onArrival(t, packet));
        return packet;
    }

    @Test
    void intIsStampedWhenThePacketIsDequeuedWithTheQueueLeftBehindIt() {
        // a starts at once; b arrives during a's serialisation and waits; c arrives during a's too.
        final SimPacket a = arriveAt(0, 0);
        final SimPacket b = arriveAt(100, 4_096);
        final SimPacket c = arriveAt(200, 8_192);
        scheduler.runUntil(10_000);

        // a left an empty queue at t = 0, having started no bytes before it.
        assertThat(a.telemetry.hopCount()).isEqualTo(1);
        assertThat(a.telemetry.timestampNs(0)).isZero();
        assertThat(a.telemetry.queueBytes(0)).isZero();
        assertThat(a.telemetry.txBytes(0)).isZero();
        assertThat(a.telemetry.linkRateBps(0)).isEqualTo(SHAPE.lineRateBps());
        // b starts when a's last bit is out, with c behind it.
        assertThat(b.telemetry.timestampNs(0)).isEqualTo(Math.ceilDiv(SERIALISATION_PS, 1_000));
        assertThat(b.telemetry.queueBytes(0)).isEqualTo(4_096);
        assertThat(b.telemetry.txBytes(0)).isEqualTo(4_096);
        // c leaves nothing behind.
        assertThat(c.telemetry.timestampNs(0)).isEqualTo(Math.ceilDiv(2 * SERIALISATION_PS, 1_000));
        assertThat(c.telemetry.queueBytes(0)).isZero();
        assertThat(c.telemetry.txBytes(0)).isEqualTo(8_192);
    }

    @Test
    void aPacketArrivingDuringAnotherOnesSerialisationIsNotCountedAsQueueOfThatOne() {
        // a is alone when it starts; b arrives while a is on the wire. Stamping after serialisation
        // would report b as a's queue and bias whichever flow's packets tend to go first.
        final SimPacket a = arriveAt(0, 0);
        final SimPacket b = arriveAt(300, 4_096);
        scheduler.runUntil(10_000);

        assertThat(a.telemetry.queueBytes(0)).isZero();
        assertThat(b.telemetry.queueBytes(0)).isZero();
        // tx-bytes over time between consecutive stamps is the link rate while busy.
        final double txBps = (b.telemetry.txBytes(0) - a.telemetry.txBytes(0))
                * 8e9
                / (b.telemetry.timestampNs(0) - a.telemetry.timestampNs(0));
        assertThat(txBps).isCloseTo(SHAPE.lineRateBps(), org.assertj.core.data.Percentage.withPercentage(0.5));
    }
}
