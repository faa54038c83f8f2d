package org.vrdma.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LinkModelTest {
    private static final long GBPS = 1_000_000_000L;

    private final VirtualTimeScheduler scheduler = new VirtualTimeScheduler(3);
    private final List<Long> arrivalsNs = new ArrayList<>();
    private final List<Integer> arrivedTags = new ArrayList<>();
    private final FrameSink sink = (frame, nowNs) -> {
        arrivalsNs.add(nowNs);
        arrivedTags.add(frame.getInt(0));
        frame.release();
    };

    private static ByteBuf frame(int bytes, int tag) {
        ByteBuf buf = Unpooled.buffer(bytes);
        buf.writeInt(tag);
        buf.writerIndex(bytes);
        return buf;
    }

    @Test
    void framesArriveAfterSerialisationPlusPropagationInOrder() {
        // 1000 bytes at 100 Gbit/s = 80 ns on the wire; 1 us propagation.
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(100 * GBPS, 1_000), scheduler.random("l"), sink);
        for (int i = 0; i < 3; i++) {
            assertThat(link.send(frame(1000, i))).isTrue();
        }
        scheduler.runUntilIdle(100);
        assertThat(arrivalsNs).containsExactly(1_080L, 1_160L, 1_240L);
        assertThat(arrivedTags).containsExactly(0, 1, 2);
        assertThat(link.framesDelivered()).isEqualTo(3);
        assertThat(link.bytesDelivered()).isEqualTo(3000);
    }

    @Test
    void fractionalSerialisationTimesDoNotDrift() {
        // 1 byte at 3 Gbit/s = 2.666... ns; 3,000,000 bytes must take exactly 8 ms.
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(3 * GBPS, 0), scheduler.random("l"), sink);
        int frames = 3_000;
        for (int i = 0; i < frames; i++) {
            link.send(frame(1_000, i));
            scheduler.runUntil(scheduler.nowNs() + 2_000);
        }
        scheduler.runUntilIdle(10_000);
        // Sent every 2 us, the transmitter never idles: frame i leaves at (i+1) * 2666.667 ns. Each
        // frame is rounded up to a whole picosecond, so 3000 frames drift by 1 ns, not 1 us.
        assertThat(arrivalsNs.get(frames - 1)).isEqualTo(8_000_001L);
        assertThat(arrivalsNs.get(0)).isEqualTo(2_667L);
        assertThat(link.serialisationPs(3_000_000)).isEqualTo(8_000_000_000L);
    }

    @Test
    void tailDropsWhenTheQueueIsFullAndTracksHighWater() {
        LinkConfig config = LinkConfig.of(10 * GBPS, 500).withQueueCapacityBytes(4_000);
        LinkModel link = new LinkModel(scheduler, config, scheduler.random("l"), sink);
        int accepted = 0;
        for (int i = 0; i < 10; i++) {
            if (link.send(frame(1_000, i))) {
                accepted++;
            }
        }
        assertThat(accepted).isEqualTo(4);
        assertThat(link.framesTailDropped()).isEqualTo(6);
        assertThat(link.queueHighWaterBytes()).isEqualTo(4_000);

        // After one serialisation time (800 ns) one frame has left the queue: room for one more.
        scheduler.runUntil(800);
        assertThat(link.queuedBytes()).isEqualTo(3_000);
        assertThat(link.send(frame(1_000, 99))).isTrue();
        scheduler.runUntilIdle(100);
        assertThat(arrivedTags).containsExactly(0, 1, 2, 3, 99);
        assertThat(link.queuedBytes()).isZero();
    }

    @Test
    void seededLossMatchesTheConfiguredProbabilityAndIsReproducible() {
        long lost1 = lossyRun(11);
        long lost2 = lossyRun(11);
        assertThat(lost1).isEqualTo(lost2);
        assertThat(lost1 / 100_000.0).isCloseTo(0.05, within(0.005));
        assertThat(lossyRun(12)).isNotEqualTo(lost1);
    }

    private static long lossyRun(long seed) {
        VirtualTimeScheduler s = new VirtualTimeScheduler(seed);
        long[] delivered = {0};
        LinkConfig config = LinkConfig.of(100 * GBPS, 100).withLossProbability(0.05);
        LinkModel link = new LinkModel(s, config, s.random("link"), (f, now) -> {
            delivered[0]++;
            f.release();
        });
        for (int i = 0; i < 100_000; i++) {
            link.send(frame(64, i));
            if (i % 100 == 0) {
                s.runUntilIdle(1_000);
            }
        }
        s.runUntilIdle(1_000_000);
        assertThat(delivered[0] + link.framesLost()).isEqualTo(100_000);
        return link.framesLost();
    }

    @Test
    void lossCanChangeAtRunTimeAndIsValidated() {
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(GBPS, 0), scheduler.random("l"), sink);
        link.lossProbability(1.0);
        link.send(frame(100, 1));
        scheduler.runUntilIdle(10);
        assertThat(arrivedTags).isEmpty();
        assertThat(link.framesLost()).isEqualTo(1);
        link.lossProbability(0.0);
        link.send(frame(100, 2));
        scheduler.runUntilIdle(10);
        assertThat(arrivedTags).containsExactly(2);
        assertThatThrownBy(() -> link.lossProbability(1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LinkConfig(0, 0, 1, 0)).hasMessageContaining("rateBps");
    }

    @Test
    void closeReleasesFramesInFlight() {
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(GBPS, 1_000_000), scheduler.random("l"), sink);
        ByteBuf a = frame(100, 1);
        ByteBuf b = frame(100, 2);
        link.send(a);
        link.send(b);
        link.close();
        assertThat(a.refCnt()).isZero();
        assertThat(b.refCnt()).isZero();
        assertThat(scheduler.runUntilIdle(10)).isZero();
        assertThat(arrivedTags).isEmpty();
    }

    @Test
    void ringGrowsWithManyFramesInFlight() {
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(100 * GBPS, 1_000_000), scheduler.random("l"), sink);
        for (int i = 0; i < 1_000; i++) {
            link.send(frame(100, i));
        }
        assertThat(link.framesInFlight()).isEqualTo(1_000);
        scheduler.runUntilIdle(10_000);
        assertThat(arrivedTags).hasSize(1_000);
        for (int i = 0; i < 1_000; i++) {
            assertThat(arrivedTags.get(i)).isEqualTo(i);
        }
    }

    @Test
    void faultsReorderAndDuplicateWithoutLosingOrLeakingFrames() {
        LinkModel link = new LinkModel(scheduler, LinkConfig.of(100 * GBPS, 1_000), scheduler.random("l"), sink);
        link.faults(FaultConfig.NONE.withReordering(0.2, 5_000).withDuplicates(0.1));
        int frames = 2_000;
        for (int i = 0; i < frames; i++) {
            link.send(frame(100, i));
            scheduler.runFor(100);
        }
        scheduler.runUntilIdle(100_000);

        FaultInjector faults = link.faultInjector();
        assertThat(arrivedTags).hasSize(frames + (int) faults.duplicates());
        assertThat(arrivedTags)
                .containsAll(java.util.stream.IntStream.range(0, frames).boxed().toList());
        assertThat(faults.duplicates()).isPositive();
        assertThat(faults.reordered()).isPositive();
        boolean outOfOrder = false;
        for (int i = 1; i < arrivedTags.size(); i++) {
            outOfOrder |= arrivedTags.get(i) < arrivedTags.get(i - 1);
        }
        assertThat(outOfOrder).isTrue();
        assertThat(arrivalsNs).isSorted();
    }
}
