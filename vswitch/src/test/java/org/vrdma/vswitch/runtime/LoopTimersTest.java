package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.TimerHandler;

/**
 * The timers a {@link TimerEventLoop} runs, driven by hand: a controllable clock and a task queue
 * stand in for the loop, which asks {@link LoopTimers#nextDeadlineNs()} before it waits and calls
 * {@link LoopTimers#queueExpiryIfDue} at the start of each turn's tasks.
 */
class LoopTimersTest {
    private long nowNs = 1_000_000;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final LoopTimers timers = new LoopTimers(tasks::add, () -> nowNs, null);
    private final List<String> fired = new ArrayList<>();

    /** One turn of the loop at the current time: due timers queued behind the tasks, all run. */
    private void turn() {
        timers.queueExpiryIfDue(tasks);
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
    }

    /** The loop waits until the earliest deadline, then takes a turn. */
    private void waitAndTurn() {
        assertThat(timers.nextDeadlineNs()).isNotEqualTo(Long.MAX_VALUE);
        nowNs = Math.max(nowNs, timers.nextDeadlineNs());
        turn();
    }

    private long schedule(long deadlineNs, String name) {
        return timers.add(deadlineNs, (n, id) -> {
            assertThat(n).as("never early").isGreaterThanOrEqualTo(deadlineNs);
            fired.add(name + "@" + (n - 1_000_000));
        });
    }

    @Test
    void theLoopWaitsForTheEarliestLiveDeadlineAndTimersFireInOrder() {
        schedule(nowNs + 3_000, "c");
        long a = schedule(nowNs + 1_000, "a");
        long x = schedule(nowNs + 2_000, "x");
        schedule(nowNs + 2_000, "b1");
        schedule(nowNs + 2_000, "b2");
        assertThat(tasks).as("future timers queue nothing").isEmpty();
        assertThat(timers.nextDeadlineNs()).isEqualTo(1_001_000);

        // Cancelling the earliest moves the wait's end at once: no early wake-up for a dead timer.
        assertThat(timers.cancel(a)).isTrue();
        assertThat(timers.cancel(x)).isTrue();
        assertThat(timers.cancel(x)).isFalse();
        assertThat(timers.nextDeadlineNs()).isEqualTo(1_002_000);

        nowNs += 1_500;
        turn();
        assertThat(fired).as("nothing due yet").isEmpty();

        waitAndTurn();
        assertThat(fired).containsExactly("b1@2000", "b2@2000");
        assertThat(timers.nextDeadlineNs()).isEqualTo(1_003_000);

        // Woken late: the timer runs then, with the time it runs at.
        nowNs += 5_000;
        turn();
        assertThat(fired).containsExactly("b1@2000", "b2@2000", "c@7000");
        assertThat(timers.nextDeadlineNs()).isEqualTo(Long.MAX_VALUE);
        assertThat(timers.pending()).isZero();
        assertThat(timers.fired()).isEqualTo(3);
    }

    @Test
    void anEarlierTimerMovesTheWaitForwardAndAHandlerCanRearmItself() {
        schedule(nowNs + 5_000_000, "far");
        timers.add(nowNs + 1_000, new TimerHandler() {
            int runs;

            @Override
            public void onTimer(long n, long timerId) {
                fired.add("tick" + runs + "@" + (n - 1_000_000));
                if (++runs < 3) {
                    timers.add(n + 100, this);
                }
            }
        });
        assertThat(timers.nextDeadlineNs()).isEqualTo(1_001_000);
        waitAndTurn();
        assertThat(timers.nextDeadlineNs()).isEqualTo(1_001_100);
        waitAndTurn();
        waitAndTurn();
        assertThat(fired).containsExactly("tick0@1000", "tick1@1100", "tick2@1200");
        assertThat(timers.nextDeadlineNs()).isEqualTo(6_000_000);
    }

    @Test
    void aTimerDueNowRunsAfterTheCurrentTaskInOrderWithTheQueuedTasks() {
        tasks.add(() -> fired.add("task-before"));
        schedule(nowNs, "now1");
        long cancelled = schedule(nowNs - 1_000, "cancelled");
        timers.add(nowNs, (n, id) -> {
            fired.add("now2");
            // Scheduled for now by a timer: the next run of the expiry, behind the tasks queued since.
            tasks.add(() -> fired.add("task-from-timer"));
            timers.add(n, (n2, id2) -> fired.add("now4"));
        });
        schedule(nowNs, "now3");
        timers.cancel(cancelled);
        assertThat(tasks).as("one expiry task however many timers are due").hasSize(2);
        tasks.add(() -> fired.add("task-after"));

        turn();
        assertThat(fired)
                .containsExactly("task-before", "now1@0", "now2", "now3@0", "task-after", "task-from-timer", "now4");
        assertThat(timers.pending()).isZero();
    }

    @Test
    void aTurnQueuesTheExpiryOnceAndOnlyWhenATimerIsDue() {
        schedule(nowNs + 1_000, "a");
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks).isEmpty();
        nowNs += 1_000;
        timers.queueExpiryIfDue(tasks);
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks).hasSize(1);
        // A timer due now while the expiry is queued joins it.
        schedule(nowNs, "b");
        assertThat(tasks).hasSize(1);
        turn();
        assertThat(fired).containsExactly("a@1000", "b@1000");
    }
}
