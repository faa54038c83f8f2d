package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoop;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Inside a read burst the loop's clock serves {@link LoopClock#READS_PER_SAMPLE} reads from one
 * sample and never goes backwards; outside bursts, and from other threads, every read is fresh.
 */
class LoopClockTest {
    private DefaultEventLoop loop;

    @BeforeEach
    void start() {
        loop = new DefaultEventLoop();
    }

    @AfterEach
    void stop() throws Exception {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }

    @Test
    void oneLoopOneClockSharedByItsTimerServices() {
        assertThat(LoopClock.of(loop)).isSameAs(LoopClock.of(loop));
        assertThat(LoopClock.of(new DefaultEventLoop())).isNotSameAs(LoopClock.of(loop));
    }

    @Test
    void insideABurstReadsShareSamplesAndNeverGoBack() throws Exception {
        LoopClock clock = LoopClock.of(loop);
        loop.submit(() -> {
                    int reads = 3 * LoopClock.READS_PER_SAMPLE;
                    long[] t = new long[reads];
                    clock.beginBurst();
                    try {
                        for (int i = 0; i < reads; i++) {
                            t[i] = clock.nowNs();
                        }
                    } finally {
                        clock.endBurst();
                    }
                    for (int i = 1; i < reads; i++) {
                        assertThat(t[i]).isGreaterThanOrEqualTo(t[i - 1]);
                        if (i % LoopClock.READS_PER_SAMPLE != 0) {
                            assertThat(t[i])
                                    .as("read %d served from the sample", i)
                                    .isEqualTo(t[i - 1]);
                        }
                    }
                    assertThat(clock.burstReads()).isEqualTo(reads);
                    assertThat(clock.burstSamples()).isEqualTo(3);
                    // After the burst every read samples the clock again.
                    assertThat(clock.nowNs()).isGreaterThanOrEqualTo(t[reads - 1]);
                    assertThat(clock.burstReads()).isEqualTo(reads);
                    return null;
                })
                .get(10, TimeUnit.SECONDS);
    }

    @Test
    void aNewBurstSamplesAtItsFirstRead() throws Exception {
        LoopClock clock = LoopClock.of(loop);
        loop.submit(() -> {
                    clock.beginBurst();
                    clock.nowNs();
                    clock.endBurst();
                    clock.beginBurst();
                    clock.nowNs();
                    clock.endBurst();
                    assertThat(clock.burstSamples()).as("one sample per burst").isEqualTo(2);
                    return null;
                })
                .get(10, TimeUnit.SECONDS);
    }

    @Test
    void otherThreadsReadTheClockDuringABurst() throws Exception {
        LoopClock clock = LoopClock.of(loop);
        CountDownLatch inBurst = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        loop.execute(() -> {
            clock.beginBurst();
            inBurst.countDown();
            try {
                done.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            clock.endBurst();
        });
        assertThat(inBurst.await(10, TimeUnit.SECONDS)).isTrue();
        clock.nowNs();
        clock.nowNs();
        done.countDown();
        assertThat(clock.burstReads())
                .as("reads off the loop are not burst reads")
                .isZero();
    }
}
