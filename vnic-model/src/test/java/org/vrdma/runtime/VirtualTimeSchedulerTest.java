package org.vrdma.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class VirtualTimeSchedulerTest {

    /** A toy workload: actors that wake at random times, draw random numbers and wake each other. */
    private static List<String> runScenario(long seed) {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(seed);
        List<String> trace = new ArrayList<>();
        int actors = 8;
        TimerHandler[] handlers = new TimerHandler[actors];
        for (int i = 0; i < actors; i++) {
            int index = i;
            RandomGenerator random = scheduler.random("actor", i);
            handlers[i] = new TimerHandler() {
                int wakeups;

                @Override
                public void onTimer(long nowNs, long timerId) {
                    if (++wakeups > 200) {
                        return;
                    }
                    long delay = random.nextLong(1, 5_000);
                    scheduler.scheduleAfter(delay, this);
                    if (random.nextInt(4) == 0) {
                        // Wake a peer "now": simultaneous events must keep their order.
                        scheduler.scheduleAt(nowNs, handlers[(index + 1) % actors]);
                    }
                }

                @Override
                public String toString() {
                    return "actor" + index;
                }
            };
            scheduler.scheduleAt(0, handlers[i]);
        }
        scheduler.tracer((nowNs, id, handler) -> trace.add(nowNs + ":" + handler));
        scheduler.runUntilIdle(1_000_000);
        return trace;
    }

    @Test
    void sameSeedGivesIdenticalTraces() {
        List<String> first = runScenario(7);
        List<String> second = runScenario(7);
        assertThat(first).hasSizeGreaterThan(1_000);
        assertThat(second).isEqualTo(first);
    }

    @Test
    void differentSeedsGiveDifferentTraces() {
        assertThat(runScenario(7)).isNotEqualTo(runScenario(8));
    }

    @Test
    void simultaneousEventsRunInSchedulingOrderAndTimeNeverGoesBack() {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(1);
        List<String> order = new ArrayList<>();
        long[] lastNs = {Long.MIN_VALUE};
        TimerHandler a = (nowNs, id) -> order.add("a@" + nowNs);
        TimerHandler b = (nowNs, id) -> order.add("b@" + nowNs);
        TimerHandler c = (nowNs, id) -> {
            order.add("c@" + nowNs);
            // Scheduled in the past: runs now, after what is already due now.
            scheduler.scheduleAt(nowNs - 50, (n, i) -> order.add("late@" + n));
        };
        scheduler.scheduleAt(100, b);
        scheduler.scheduleAt(100, c);
        scheduler.scheduleAt(100, a);
        scheduler.scheduleAt(50, a);
        scheduler.tracer((nowNs, id, handler) -> {
            assertThat(nowNs).isGreaterThanOrEqualTo(lastNs[0]);
            lastNs[0] = nowNs;
        });

        scheduler.runUntilIdle(100);

        assertThat(order).containsExactly("a@50", "b@100", "c@100", "a@100", "late@100");
        assertThat(scheduler.nowNs()).isEqualTo(100);
    }

    @Test
    void runUntilStopsAtTheBoundAndAdvancesTime() {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(1);
        List<Long> fired = new ArrayList<>();
        TimerHandler h = (nowNs, id) -> fired.add(nowNs);
        scheduler.scheduleAt(10, h);
        scheduler.scheduleAt(20, h);
        long cancelled = scheduler.scheduleAt(25, h);
        scheduler.scheduleAt(30, h);
        assertThat(scheduler.cancel(cancelled)).isTrue();

        assertThat(scheduler.runUntil(25)).isEqualTo(2);
        assertThat(scheduler.nowNs()).isEqualTo(25);
        assertThat(fired).containsExactly(10L, 20L);
        assertThat(scheduler.pendingTimers()).isEqualTo(1);

        scheduler.runFor(100);
        assertThat(fired).containsExactly(10L, 20L, 30L);
        assertThat(scheduler.nowNs()).isEqualTo(125);
    }

    @Test
    void runUntilIdleIsBoundedForSelfReschedulingEngines() {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(1);
        TimerHandler forever = new TimerHandler() {
            @Override
            public void onTimer(long nowNs, long timerId) {
                scheduler.scheduleAfter(1, this);
            }
        };
        scheduler.scheduleAt(0, forever);
        assertThat(scheduler.runUntilIdle(10_000)).isEqualTo(10_000);
        assertThat(scheduler.nowNs()).isEqualTo(9_999);
    }

    @Test
    void namedRandomStreamsAreReproducibleAndIndependent() {
        SeededRandoms one = new SeededRandoms(99);
        SeededRandoms two = new SeededRandoms(99);
        assertThat(one.stream("link").nextLong()).isEqualTo(two.stream("link").nextLong());
        assertThat(one.stream("link").nextLong()).isNotEqualTo(one.stream("qp").nextLong());
        assertThat(one.stream("flow", 1).nextLong())
                .isNotEqualTo(one.stream("flow", 2).nextLong());
        assertThat(new SeededRandoms(100).stream("link").nextLong())
                .isNotEqualTo(one.stream("link").nextLong());
    }
}
