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
     * owed to due timers), then the tasks, which start with the timers' check.
     */
    private void ioThenTasks(LoopTimers t) {
        t.beforeIoTurn();
        // The poll reads what is queued when it reads; what arrives while that is handled waits.
        int queued = socket.size();
        for (int i = 0; i < queued; i++) {
            socket.poll().run();
        }
        boolean input = queued > 0;
        t.onIoTurn(input);
        t.queueExpiryIfDue(tasks);
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
    }

    /**
     * The retransmission timer of a request whose ACK arrives in time, but while the loop handles a
     * datagram it read before the deadline and loses its core for 20 ms: when the loop gets to its
     * timers, the ACK waits in the socket and the timer is due.
     */
    private void ackArrivesWhileTheLoopIsOffItsCore(LoopTimers t) {
        long[] rto = new long[1];
        rto[0] = t.add(nowNs + 5_000_000, (n, id) -> fired.add("rto@" + (n - 1_000_000)));
        socket.add(() -> {
            fired.add("data");
            nowNs += 3_000_000;
            socket.add(() -> {
                fired.add("ack");
                t.cancel(rto[0]);
            });
            nowNs += 17_000_000;
        });
        t.beforeIoTurn();
        Runnable data = socket.poll();
        data.run();
        t.onIoTurn(true);
    }

    @Test
    void aTimerFoundDueAfterInputWaitsForOneIoTurnSoTheAckAlreadyQueuedCancelsIt() {
        ackArrivesWhileTheLoopIsOffItsCore(timers);
        // The turn's tasks start with the timers' check.
        timers.queueExpiryIfDue(tasks);
        assertThat(tasks)
                .as("the due timer is not queued before the socket is read")
                .isEmpty();
        assertThat(timers.ioTurnOwed())
                .as("the loop must poll without blocking")
                .isTrue();

        ioThenTasks(timers);
        assertThat(fired).as("the ACK is handled first and cancels the timer").containsExactly("data", "ack");
        assertThat(timers.ioTurnOwed()).isFalse();
        assertThat(timers.pending()).isZero();
        assertThat(timers.lateExpiries()).isEqualTo(1);
        assertThat(timers.owedTurns()).isEqualTo(1);
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);
        assertThat(timers.lateTimersResolved()).isEqualTo(1);
    }

    @Test
    void withoutTheIoTurnTheTimerFiresBeforeTheAckThatWaitedForTheLoop() {
        LoopTimers timersFirst = new LoopTimers(tasks::add, () -> nowNs, null, false);
        ackArrivesWhileTheLoopIsOffItsCore(timersFirst);
        timersFirst.queueExpiryIfDue(tasks);
        assertThat(timersFirst.ioTurnOwed()).isFalse();
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
        ioThenTasks(timersFirst);
        assertThat(fired).as("a spurious timeout").containsExactly("data", "rto@20000000", "ack");
        assertThat(timersFirst.lateExpiries()).isEqualTo(1);
        assertThat(timersFirst.owedTurns()).isZero();
    }

    @Test
    void timersStillDueAfterTheIoTurnFireThenInDeadlineOrderAndOneTurnIsOwedPerCheck() {
        schedule(nowNs + 2_000, "b");
        schedule(nowNs + 1_000, "a");
        schedule(nowNs + 50_000_000, "later");
        socket.add(() -> {
            fired.add("datagram1");
            nowNs += 10_000_000;
            socket.add(() -> fired.add("datagram2"));
        });
        ioThenTasks(timers);
        assertThat(fired).containsExactly("datagram1");
        assertThat(timers.ioTurnOwed()).isTrue();

        // The owed turn finds input again (traffic keeps flowing): the timers run all the same.
        ioThenTasks(timers);
        assertThat(fired).containsExactly("datagram1", "datagram2", "a@10000000", "b@10000000");
        assertThat(timers.lateTimersResolved()).isZero();
        assertThat(timers.owedTurns()).isEqualTo(1);
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);

        // The owed turn finds nothing: the timer runs after it.
        socket.add(() -> nowNs += 50_000_000);
        ioThenTasks(timers);
        assertThat(fired).hasSize(4);
        ioThenTasks(timers);
        assertThat(fired).containsExactly("datagram1", "datagram2", "a@10000000", "b@10000000", "later@60000000");
        assertThat(timers.owedTurns()).isEqualTo(2);
        assertThat(timers.ioTurnsWithEvents()).isEqualTo(1);
    }

    @Test
    void aTimerTheLoopWaitedForFiresOnItsTurnWithoutAnExtraIoTurnHoweverLate() {
        schedule(nowNs + 1_000, "a");
        // Woken by the deadline, late (a loaded machine): the wait polled the socket after the deadline.
        nowNs += 5_000_000;
        ioThenTasks(timers);
        assertThat(fired).containsExactly("a@5000000");
        assertThat(timers.lateExpiries()).isEqualTo(1);
        assertThat(timers.owedTurns()).isZero();
    }

    @Test
    void aTimerDueNowFromTheInputRunsAtOnceUnlessAnOlderTimerFellDueMeanwhile() {
        // A deferred ACK scheduled for now by a datagram's handler: runs after the turn's I/O, no extra poll.
        socket.add(() -> {
            fired.add("data1");
            timers.add(nowNs, (n, id) -> fired.add("ack-timer1"));
        });
        ioThenTasks(timers);
        assertThat(fired).containsExactly("data1", "ack-timer1");
        assertThat(timers.owedTurns()).isZero();

        // The same while a probe armed before fell due during the handling, with the peer's ACK
        // already queued: both wait for one poll, which reads the ACK first; then both run in order.
        long[] probe = new long[1];
        probe[0] = schedule(nowNs + 1_000_000, "probe");
        socket.add(() -> {
            fired.add("data2");
            nowNs += 2_000_000;
            socket.add(() -> {
                fired.add("peer-ack");
                timers.cancel(probe[0]);
            });
            timers.add(nowNs, (n, id) -> fired.add("ack-timer2"));
        });
        ioThenTasks(timers);
        assertThat(fired).containsExactly("data1", "ack-timer1", "data2");
        assertThat(timers.ioTurnOwed()).isTrue();
        ioThenTasks(timers);
        assertThat(fired).containsExactly("data1", "ack-timer1", "data2", "peer-ack", "ack-timer2");
        assertThat(timers.owedTurns()).isEqualTo(1);
        assertThat(timers.lateTimersResolved()).isEqualTo(1);
    }
}
