package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.vrdma.runtime.TimerHandler;

/**
 * The timer service on real event loops: the runtime's {@link TimerEventLoop}, which wakes for the
 * timers itself, and a plain Netty loop, on which the service arms a Netty scheduled task.
 */
class EventLoopTimerServiceTest {
    private EventLoopGroup group;
    private EventLoop loop;
    private EventLoopTimerService timers;

    void start(boolean loopDriven) {
        group = loopDriven
                ? NettyRuntime.best().newEventLoopGroup(1, "timer-test")
                : new MultiThreadIoEventLoopGroup(1, NettyRuntime.best().ioHandlerFactory());
        loop = group.next();
        timers = new EventLoopTimerService(loop);
        assertThat(timers.loopDriven()).isEqualTo(loopDriven);
    }

    @AfterEach
    void shutdown() throws InterruptedException {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "loop-driven {0}")
    @ValueSource(booleans = {true, false})
    void timersFireInDeadlineOrderNeverEarlyAndCancelledOnesNever(boolean loopDriven) throws Exception {
        start(loopDriven);
        List<String> fired = Collections.synchronizedList(new ArrayList<>());
        List<Long> lateness = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(4);
        loop.execute(() -> {
            long base = timers.nowNs();
            schedule(base + 3_000_000, "c", fired, lateness, done);
            schedule(base + 1_000_000, "a", fired, lateness, done);
            long cancelled = schedule(base + 2_000_000, "x", fired, lateness, done);
            schedule(base + 2_000_000, "b1", fired, lateness, done);
            schedule(base + 2_000_000, "b2", fired, lateness, done);
            assertThat(timers.cancel(cancelled)).isTrue();
        });

        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fired).containsExactly("a", "b1", "b2", "c");
        assertThat(lateness).allSatisfy(ns -> assertThat(ns).isNotNegative());
    }

    private long schedule(long deadlineNs, String name, List<String> fired, List<Long> lateness, CountDownLatch done) {
        TimerHandler h = (nowNs, id) -> {
            fired.add(name);
            lateness.add(nowNs - deadlineNs);
            done.countDown();
        };
        return timers.scheduleAt(deadlineNs, h);
    }

    @ParameterizedTest(name = "loop-driven {0}")
    @ValueSource(booleans = {true, false})
    void anEarlierTimerRearmsAndAHandlerCanReschedule(boolean loopDriven) throws Exception {
        start(loopDriven);
        CountDownLatch done = new CountDownLatch(1);
        List<String> fired = Collections.synchronizedList(new ArrayList<>());
        loop.execute(() -> {
            long now = timers.nowNs();
            timers.scheduleAt(now + 5_000_000_000L, (n, id) -> fired.add("far"));
            timers.scheduleAt(now + 1_000_000, new TimerHandler() {
                int runs;

                @Override
                public void onTimer(long nowNs, long timerId) {
                    fired.add("tick" + runs);
                    if (++runs < 3) {
                        timers.scheduleAfter(100_000, this);
                    } else {
                        done.countDown();
                    }
                }
            });
        });
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fired).containsExactly("tick0", "tick1", "tick2");
    }

    @ParameterizedTest(name = "loop-driven {0}")
    @ValueSource(booleans = {true, false})
    void timersDueNowRunAfterTheCurrentTaskInOrderWhileALaterTimerStaysArmed(boolean loopDriven) throws Exception {
        start(loopDriven);
        CountDownLatch done = new CountDownLatch(1);
        List<String> fired = Collections.synchronizedList(new ArrayList<>());
        loop.execute(() -> {
            long now = timers.nowNs();
            timers.scheduleAt(now + 2_000_000, (n, id) -> {
                fired.add("later");
                done.countDown();
            });
            timers.scheduleAt(now, (n, id) -> {
                fired.add("now1");
                // Scheduled for now from a handler: the next turn, not this one.
                timers.scheduleAt(n, (n2, id2) -> fired.add("now3"));
            });
            long cancelled = timers.scheduleAt(now - 1_000, (n, id) -> fired.add("cancelled"));
            timers.scheduleAt(now, (n, id) -> fired.add("now2"));
            timers.cancel(cancelled);
            fired.add("task");
        });
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        // "later" may be due already when the loop gets to the timers (a slow start); the timers due
        // now keep their order either way.
        assertThat(loop.submit(timers::pendingTimers).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(fired).contains("later");
        assertThat(fired.stream().filter(f -> !f.equals("later"))).containsExactly("task", "now1", "now2", "now3");
    }

    @ParameterizedTest(name = "loop-driven {0}")
    @ValueSource(booleans = {true, false})
    void rejectsCallsFromOtherThreads(boolean loopDriven) {
        start(loopDriven);
        assertThatThrownBy(() -> timers.scheduleAfter(1, (n, id) -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("event loop");
    }
}
