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
    private final LoopTimers timers = new LoopTimers(tasks::add, () -> nowNs, null, true);
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

    /** Datagrams waiting in the loop's socket: read by the loop's next I/O turn. */
    private final ArrayDeque<Runnable> socket = new ArrayDeque<>();

    /**
     * One turn as {@link TimerEventLoop} takes it: the I/O (a poll that does not block when a turn is
     * owed to late timers), then the tasks, which start with the timers' check.
     */
    private void ioThenTasks(LoopTimers t) {
        int ready = 0;
        Runnable datagram;
        while ((datagram = socket.poll()) != null) {
            datagram.run();
            ready++;
        }
        t.onIoTurn(ready);
        t.queueExpiryIfDue(tasks);
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
    }

    /**
     * The retransmission timer of a request whose ACK arrived in time, but while the loop was off its
     * core (the loop had polled its socket before the deadline and lost its core while handling what
     * it read): when the loop runs again, the ACK already waits in the socket and the timer is due.
     */
    private long descheduledWithAnAckWaiting(LoopTimers t) {
        long[] rto = new long[1];
        rto[0] = t.add(nowNs + 5_000_000, (n, id) -> fired.add("rto@" + (n - 1_000_000)));
        // The loop polls (nothing yet) and starts handling a read burst ...
        ioThenTasks(t);
        // ... loses its core for 20 ms, during which the ACK arrives (before the deadline).
        nowNs += 3_000_000;
        socket.add(() -> {
            fired.add("ack");
            t.cancel(rto[0]);
        });
        nowNs += 17_000_000;
        return rto[0];
    }

    @Test
    void aTimerFoundLateWaitsForOneIoTurnSoTheAckAlreadyQueuedCancelsIt() {
        descheduledWithAnAckWaiting(timers);
        // The rest of the burst's turn: its tasks start with the timers' check.
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks)
                .as("the late timer is not queued before the socket is read")
                .isEmpty();
        assertThat(timers.ioTurnOwed())
                .as("the loop must poll without blocking")
                .isTrue();

        ioThenTasks(timers);
        assertThat(fired).as("the ACK is handled first and cancels the timer").containsExactly("ack");
        assertThat(timers.ioTurnOwed()).isFalse();
        assertThat(timers.pending()).isZero();
        assertThat(timers.lateExpiries()).isEqualTo(1);
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);
        assertThat(timers.lateTimersResolved()).isEqualTo(1);
    }

    @Test
    void withoutTheIoTurnTheLateTimerFiresBeforeTheAckThatWaitedForTheLoop() {
        LoopTimers firstTimers = new LoopTimers(tasks::add, () -> nowNs, null, false);
        descheduledWithAnAckWaiting(firstTimers);
        firstTimers.queueExpiryIfDue(tasks);
        assertThat(firstTimers.ioTurnOwed()).isFalse();
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
        ioThenTasks(firstTimers);
        assertThat(fired).as("a spurious timeout").containsExactly("rto@20000000", "ack");
        assertThat(firstTimers.lateExpiries()).isEqualTo(1);
    }

    @Test
    void lateTimersStillDueAfterTheIoTurnFireThenInDeadlineOrder() {
        schedule(nowNs + 2_000, "b");
        schedule(nowNs + 1_000, "a");
        schedule(nowNs + 50_000_000, "later");
        nowNs += 10_000_000;
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks).isEmpty();
        socket.add(() -> fired.add("datagram"));

        ioThenTasks(timers);
        assertThat(fired).containsExactly("datagram", "a@10000000", "b@10000000");
        assertThat(timers.lateTimersResolved()).isZero();
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);

        // One I/O turn per late expiry, not one per turn: an empty socket delays the timers by that turn only.
        nowNs += 50_000_000;
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks).isEmpty();
        ioThenTasks(timers);
        assertThat(fired).containsExactly("datagram", "a@10000000", "b@10000000", "later@60000000");
        assertThat(timers.lateExpiries()).isEqualTo(2);
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);
    }

    @Test
    void aTimerTheLoopWaitedForFiresOnItsTurnWithoutAnExtraIoTurn() {
        schedule(nowNs + 1_000, "a");
        // Woken by the deadline: late by less than a descheduling, and the wait polled the socket.
        nowNs += 1_000 + LoopTimers.LATE_NS;
        ioThenTasks(timers);
        assertThat(fired).containsExactly("a@" + (1_000 + LoopTimers.LATE_NS));
        assertThat(timers.lateExpiries()).isZero();
        assertThat(timers.ioTurnOwed()).isFalse();
    }
}
