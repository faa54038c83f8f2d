package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * On a {@link TimerEventLoop}, the timer pattern of a request/response exchange allocates nothing:
 * a retransmission timer cancelled and re-armed per send, a timer due now per receive (a deferred
 * ACK), and a timer that wakes the sleeping loop and re-arms itself.
 */
class TimerEventLoopAllocationTest {
    private static final int WARMUP_FIRES = 5_000;
    private static final int MEASURED_FIRES = 5_000;
    // Room for the measurement's own noise; a Netty task per wake-up would be ~100 bytes x 5,000.
    private static final long ALLOWED_BYTES = 4_096;

    private final EventLoopGroup group = NettyRuntime.best().newEventLoopGroup(1, "timer-alloc");

    @AfterEach
    void shutdown() throws InterruptedException {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    @Test
    void schedulingReArmingCancellingAndFiringAllocateNothingPerTimer() throws Exception {
        CompletableFuture<long[]> result = new CompletableFuture<>();
        group.next().execute(() -> {
            EventLoopTimerService timers = new EventLoopTimerService(group.next());
            assertThat(timers.loopDriven()).isTrue();
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            TimerHandler exchange = new TimerHandler() {
                long rtoTimer = TimerService.NO_TIMER;
                long ackTimer = TimerService.NO_TIMER;
                int fires;
                long startBytes;
                final TimerHandler ack = (n, id) -> ackTimer = TimerService.NO_TIMER;

                @Override
                public void onTimer(long nowNs, long timerId) {
                    if (timerId == rtoTimer) {
                        return;
                    }
                    fires++;
                    if (fires == WARMUP_FIRES) {
                        startBytes = threads.getCurrentThreadAllocatedBytes();
                    } else if (fires == WARMUP_FIRES + MEASURED_FIRES) {
                        long bytes = threads.getCurrentThreadAllocatedBytes() - startBytes;
                        timers.cancel(rtoTimer);
                        result.complete(new long[] {bytes, timers.timersFired()});
                        return;
                    }
                    // A send: the retransmission timer moves later (cancel and re-arm).
                    timers.cancel(rtoTimer);
                    rtoTimer = timers.scheduleAt(nowNs + 1_000_000, this);
                    // A receive: its ACK is deferred to a timer due now.
                    if (ackTimer == TimerService.NO_TIMER) {
                        ackTimer = timers.scheduleAt(nowNs, ack);
                    }
                    // The next exchange after a short wait: the loop sleeps until this deadline.
                    timers.scheduleAfter(20_000, this);
                }
            };
            timers.scheduleAfter(1_000, exchange);
        });
        long[] bytesAndFired = result.get(60, TimeUnit.SECONDS);
        assertThat(bytesAndFired[1]).isGreaterThanOrEqualTo(2L * (WARMUP_FIRES + MEASURED_FIRES) - 2);
        assertThat(bytesAndFired[0]).isLessThan(ALLOWED_BYTES);
    }
}
