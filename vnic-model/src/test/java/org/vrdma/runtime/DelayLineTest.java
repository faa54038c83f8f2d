package org.vrdma.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DelayLineTest {
    private final VirtualTimeScheduler scheduler = new VirtualTimeScheduler(1);
    private final List<String> delivered = new ArrayList<>();
    private final DelayLine line = new DelayLine(scheduler, (frame, nowNs) -> {
        delivered.add(frame.getInt(0) + "@" + nowNs);
        frame.release();
    });

    private static ByteBuf tagged(int tag) {
        return Unpooled.buffer(4).writeInt(tag);
    }

    @Test
    void releasesByTimeThenArrivalOrder() {
        line.add(tagged(1), 300);
        line.add(tagged(2), 100);
        line.add(tagged(3), 100);
        scheduler.runUntil(50);
        line.add(tagged(4), 0);
        scheduler.runUntilIdle(100);
        assertThat(delivered).containsExactly("4@50", "2@100", "3@100", "1@300");
        assertThat(line.size()).isZero();
    }

    @Test
    void manyRandomDelaysComeOutSorted() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(5);
        for (int i = 0; i < 5_000; i++) {
            line.add(tagged(i), random.nextLong(100_000));
        }
        scheduler.runUntilIdle(100_000);
        assertThat(delivered).hasSize(5_000);
        long previous = -1;
        for (String d : delivered) {
            long at = Long.parseLong(d.substring(d.indexOf('@') + 1));
            assertThat(at).isGreaterThanOrEqualTo(previous);
            previous = at;
        }
    }

    @Test
    void closeReleasesHeldFrames() {
        ByteBuf frame = tagged(1);
        line.add(frame, 1_000);
        line.close();
        assertThat(frame.refCnt()).isZero();
        scheduler.runUntilIdle(10);
        assertThat(delivered).isEmpty();
    }

    @Test
    void tagsComeBackWithTheirFrames() {
        List<String> out = new ArrayList<>();
        DelayLine tagged = new DelayLine(scheduler, (frame, tag, nowNs) -> {
            out.add(frame.getInt(0) + ":" + tag + "@" + nowNs);
            frame.release();
        });
        tagged.add(tagged(1), 0xABL, 200);
        tagged.add(tagged(2), -1L, 100);
        tagged.add(tagged(3), 7L, 100);
        scheduler.runUntilIdle(100);
        assertThat(out).containsExactly("2:-1@100", "3:7@100", "1:171@200");
    }
}
