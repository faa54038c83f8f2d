package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.runtime.SeededRandoms;

/** The shared egress-queue model driven directly, with no timers: timing, admission, faults. */
class EgressQueueTest {
    private static ByteBuf packet() {
        return Unpooled.buffer(1);
    }

    @Test
    void backToBackDeparturesCarryTheRemainderWithoutDrift() {
        // 1000 bytes at 3 Gbit/s: 8000/3 ns = 2666.666... ns each; the k-th finishes at ceil(k * 8000 / 3).
        EgressQueue q = new EgressQueue("q", EgressConfig.of(3_000_000_000L, 1 << 20), new SeededRandoms(1), 0);
        long first = EgressQueue.NO_DEADLINE;
        for (int i = 0; i < 3; i++) {
            assertThat(q.onArrival(1000, false)).isEqualTo(EgressAdmission.ENQUEUE);
            long deadline = q.enqueue(packet(), i, 1000, 0);
            if (i == 0) {
                first = deadline;
            } else {
                assertThat(deadline).isEqualTo(EgressQueue.NO_DEADLINE);
            }
        }
        assertThat(first).isEqualTo(2667);
        assertThat(q.headDoneBy(2666)).isFalse();
        long[] doneNs = new long[3];
        long nowNs = first;
        for (int k = 0; k < 3; k++) {
            assertThat(q.headDoneBy(nowNs)).isTrue();
            assertThat(q.headTag()).isEqualTo(k);
            q.headPacket().release();
            long left = q.removeHead(1000);
            assertThat(left).isEqualTo(1000L * (2 - k));
            doneNs[k] = nowNs;
            if (q.queuedPackets() > 0) {
                q.startNextHead(1000);
                nowNs = q.headDeadlineNs();
            }
        }
        assertThat(doneNs).containsExactly(2667, 5334, 8000);
    }

    @Test
    void aPauseLetsThePacketInServiceFinishAndHoldsTheNextUntilResume() {
        // 1000 bytes at 8 Gbit/s: 1000 ns each.
        EgressQueue q = new EgressQueue("q", EgressConfig.of(8_000_000_000L, 1 << 20), new SeededRandoms(1), 0);
        assertThat(q.enqueue(packet(), 0, 1000, 0)).isEqualTo(1000);
        q.enqueue(packet(), 1, 1000, 0);
        q.pause(); // at 500 ns, while the first is on the wire
        assertThat(q.headDoneBy(1000)).isTrue();
        q.headPacket().release();
        q.removeHead(1000);
        q.startNextHead(1000);
        assertThat(q.headHeld()).isTrue();
        assertThat(q.headDoneBy(1_000_000)).isFalse();
        // Queued while paused, even onto an empty queue: nothing starts, nothing cuts through.
        assertThat(q.resume()).isTrue();
        assertThat(q.startHeadAt(1000, 3000)).isEqualTo(4000);
        q.pause();
        assertThat(q.resume()).isFalse(); // the head is in service: nothing to start
        q.headPacket().release();
        q.removeHead(1000);
        q.pause();
        assertThat(q.enqueue(packet(), 2, 1000, 5000)).isEqualTo(EgressQueue.NO_DEADLINE);
        assertThat(q.headHeld()).isTrue();
        assertThat(q.resume()).isTrue();
        assertThat(q.startHeadAt(1000, 7000)).isEqualTo(8000);
        q.releaseAll();

        EgressQueue unlimited = new EgressQueue("u", EgressConfig.of(0, 1 << 20), new SeededRandoms(1), 0);
        assertThat(unlimited.cutsThrough()).isTrue();
        unlimited.pause();
        assertThat(unlimited.cutsThrough()).isFalse();
    }

    @Test
    void idleLinkStartsANewBusyPeriodAtArrival() {
        EgressQueue q = new EgressQueue("q", EgressConfig.of(3_000_000_000L, 1 << 20), new SeededRandoms(1), 0);
        q.onArrival(1000, false);
        q.enqueue(packet(), 0, 1000, 0);
        q.headPacket().release();
        q.removeHead(1000);
        // Arrives after the link went idle: its remainder starts from zero, at its arrival time.
        assertThat(q.enqueue(packet(), 1, 1000, 10_000)).isEqualTo(12_667);
        q.releaseAll();
    }

    @Test
    void tailDropsWhatDoesNotFitAndCountsIt() {
        EgressQueue q = new EgressQueue("q", EgressConfig.of(1_000_000_000L, 2500), new SeededRandoms(1), 0);
        for (int i = 0; i < 2; i++) {
            assertThat(q.onArrival(1000, false)).isEqualTo(EgressAdmission.ENQUEUE);
            q.enqueue(packet(), i, 1000, 0);
        }
        assertThat(q.onArrival(1000, false)).isEqualTo(EgressAdmission.DROP);
        assertThat(q.onArrival(500, false)).isEqualTo(EgressAdmission.ENQUEUE);
        assertThat(q.bufferDrops()).isEqualTo(1);
        assertThat(q.queueHighWaterBytes()).isEqualTo(2000);
        assertThat(q.releaseAll()).isEqualTo(2);
        assertThat(q.queuedBytes()).isZero();
    }

    @Test
    void redMarksOnlyEcnCapablePacketsAboveKMin() {
        EgressConfig config = EgressConfig.of(1_000_000_000L, 1 << 20).withEcn(new RedEcnMarker(1000, 2000, 1.0));
        EgressQueue q = new EgressQueue("q", config, new SeededRandoms(1), 0);
        assertThat(q.onArrival(1000, true)).isEqualTo(EgressAdmission.ENQUEUE);
        for (int i = 0; i < 3; i++) {
            q.enqueue(packet(), i, 1000, 0);
        }
        assertThat(q.onArrival(1000, true)).isEqualTo(EgressAdmission.ENQUEUE_CE);
        assertThat(q.onArrival(1000, false)).isEqualTo(EgressAdmission.ENQUEUE);
        q.releaseAll();
    }

    @Test
    void unlimitedRateCutsThroughOnlyWhenEmpty() {
        EgressQueue q = new EgressQueue("q", EgressConfig.DEFAULT, new SeededRandoms(1), 0);
        assertThat(q.cutsThrough()).isTrue();
        assertThat(q.serialisationPs(1_000_000)).isZero();
        q.config(EgressConfig.of(8_000_000_000L, 1 << 20));
        assertThat(q.cutsThrough()).isFalse();
        assertThat(q.serialisationPs(1000)).isEqualTo(1_000_000);
    }

    @Test
    void faultDrawsAreSeededPerStreamAndCounted() {
        EgressConfig config = EgressConfig.of(0, 1 << 20)
                .withDataFaults(FaultConfig.randomLoss(0.3))
                .withControlFaults(FaultConfig.randomLoss(0.1));
        EgressQueue a = new EgressQueue("port", config, new SeededRandoms(42), 0);
        EgressQueue b = new EgressQueue("port", config, new SeededRandoms(42), 0);
        int dataDrops = 0;
        for (int i = 0; i < 10_000; i++) {
            boolean control = i % 2 == 1;
            int v = a.judge(control);
            assertThat(b.judge(control)).isEqualTo(v);
            if (v == FaultInjector.DROP && !control) {
                dataDrops++;
            }
        }
        assertThat(a.dataLost()).isEqualTo(dataDrops);
        assertThat(a.controlPackets()).isEqualTo(5000);
        assertThat(a.dataLost()).isBetween(1300L, 1700L);
        assertThat(a.controlLost()).isBetween(350L, 650L);
    }

    @Test
    void aQueueWhoseCallerKeepsThePacketsAdmitsMarksAndTimesAsOneThatHoldsThem() {
        // Bursts beyond a 10 Gbit/s link into a 60 kB buffer with RED marking between 10 and 40 kB:
        // tail drops, marks and back-to-back departures, the same from both queues.
        EgressConfig config = EgressConfig.of(10_000_000_000L, 60_000).withEcn(new RedEcnMarker(10_000, 40_000, 0.5));
        EgressQueue holding = new EgressQueue("q", config, new SeededRandoms(7), 0);
        EgressQueue counting = new EgressQueue("q", config, new SeededRandoms(7), 0);
        java.util.ArrayDeque<Integer> kept = new java.util.ArrayDeque<>();
        java.util.Random draw = new java.util.Random(3);
        long nowNs = 0;
        int drops = 0;
        int marks = 0;
        int departures = 0;
        for (int i = 0; i < 5000; i++) {
            nowNs += draw.nextInt(2000);
            // Departures due by now, from both.
            while (holding.headDoneBy(nowNs)) {
                assertThat(counting.headDoneBy(nowNs)).isTrue();
                assertThat(counting.headDeadlineNs()).isEqualTo(holding.headDeadlineNs());
                int bytes = (int) holding.headTag();
                holding.headPacket().release();
                assertThat(counting.removeCountedHead(kept.poll())).isEqualTo(holding.removeHead(bytes));
                departures++;
                if (holding.queuedPackets() > 0) {
                    holding.startNextHead((int) holding.headTag());
                    counting.startNextHead(kept.peek());
                }
            }
            assertThat(counting.headDoneBy(nowNs)).isFalse();
            int bytes = 64 + draw.nextInt(4100);
            int verdict = holding.onArrival(bytes, true);
            assertThat(counting.onArrival(bytes, true)).isEqualTo(verdict);
            if (verdict == EgressAdmission.DROP) {
                drops++;
                continue;
            }
            if (verdict == EgressAdmission.ENQUEUE_CE) {
                marks++;
            }
            kept.add(bytes);
            assertThat(counting.enqueueCounted(bytes, nowNs)).isEqualTo(holding.enqueue(packet(), bytes, bytes, nowNs));
            assertThat(counting.queuedBytes()).isEqualTo(holding.queuedBytes());
            assertThat(counting.queuedPackets()).isEqualTo(holding.queuedPackets());
        }
        assertThat(drops).isPositive();
        assertThat(marks).isPositive();
        assertThat(departures).isGreaterThan(1000);
        assertThat(counting.bufferDrops()).isEqualTo(holding.bufferDrops());
        assertThat(counting.queueHighWaterBytes()).isEqualTo(holding.queueHighWaterBytes());
        holding.releaseAll();
    }
}
