package org.vrdma.vswitch.runtime;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.vrdma.runtime.EventHeap;
import org.vrdma.runtime.TimerHandler;

/**
 * The pending timers of one event loop and how they get run. Timers wait in an {@link EventHeap};
 * a timer due now is run by one reused task queued on the loop (after the event that is running
 * now, in order with the loop's other tasks). For later deadlines there are two ways to be woken:
 *
 * <ul>
 *   <li>on a {@link TimerEventLoop} the loop itself asks {@link #nextDeadlineNs()} before it
 *       blocks and {@link #queueExpiryIfDue} each turn, so arming, moving and cancelling a timer
 *       touch only the heap: no Netty task, no allocation, and a cancelled timer wakes nobody;
 *   <li>on any other loop ({@code scheduler} set) one Netty scheduled task is armed for the
 *       earliest deadline and moved only when a new timer becomes the earliest; it allocates a
 *       task each time it is armed.
 * </ul>
 *
 * <p><b>Input before timers that fell due while the loop handled input.</b> The loop polls its
 * sockets, handles what it read, and only then checks its timers. A timer found due at that check
 * may have fallen due while the loop handled the input (a long burst, or one during which the loop
 * lost its core on a loaded machine), and what arrived meanwhile (the ACK that makes a
 * retransmission timer or tail probe moot) is still unread. So when the I/O turn before the check
 * handled input ({@link #onIoTurn}), {@link #queueExpiryIfDue} owes the loop one more non-blocking
 * I/O turn ({@link #ioTurnOwed()}) and queues the expiry on the turn after it. After a poll that
 * found nothing (a wait that ended at the deadline) the timers run at once: the socket was checked
 * after they fell due. Timers still run in deadline order, at most one I/O turn later.
 *
 * <p>Confined to its loop's thread.
 */
final class LoopTimers {
    /**
     * A due timer later than this was not waited for (a timed wake-up is late by tens of
     * microseconds, a lost core by milliseconds): counted in {@link #lateExpiries()}.
     */
    static final long LATE_NS = 200_000;

    /**
     * {@code -Dvrdma.loop.ioBeforeTimers=false} fires due timers without the I/O turn first, as
     * before (to compare the two).
     */
    static final boolean IO_BEFORE_TIMERS = !"false".equals(System.getProperty("vrdma.loop.ioBeforeTimers"));

    private final EventHeap heap = new EventHeap(256);
    private final Executor loop;
    private final LongSupplier clock;
    /** Null on a {@link TimerEventLoop}, which wakes for the deadlines itself. */
    private final EventExecutor scheduler;

    private final Runnable expireTask = this::onExpireTask;
    private boolean expiryQueued;

    private final Runnable scheduledExpiry = this::onScheduledExpiry;
    private long armedDeadlineNs = Long.MAX_VALUE;
    private ScheduledFuture<?> armed;

    private long timersFired;
    private LoopClock loopClock;

    /**
     * {@code -Dvrdma.loop.probeInputAtExpiry=true} asks the loop's sockets, before each expiry,
     * whether input waits in them ({@link LoopPollers#inputQueued()}, one {@code ioctl} per socket):
     * a diagnostic of timers that fire while what may cancel them is unread.
     */
    static final boolean PROBE_INPUT_AT_EXPIRY = Boolean.getBoolean("vrdma.loop.probeInputAtExpiry");

    private long expiriesWithInputQueued;
    private long timersFiredWithInputQueued;

    private final boolean ioBeforeTimers;
    /** The loop's last I/O turn handled input. */
    private boolean inputTurn;
    /** The loop's last I/O turn was owed to due timers: they run now. */
    private boolean afterOwedTurn;
    /** When the first timer due at once was scheduled since the last I/O turn. */
    private long dueNowSinceIoNs = Long.MAX_VALUE;
    /** Due timers wait for a non-blocking I/O turn of the loop. */
    private boolean ioTurnOwed;
    /** The earliest deadline when the I/O turn was owed. */
    private long owedDeadlineNs;

    private long lateExpiries;
    private long owedTurns;
    private long ioTurnsWithEvents;
    private long lateTimersResolved;

    /**
     * @param loop where the expiry task is queued
     * @param clock the time timers are due by ({@code System::nanoTime} outside tests)
     * @param scheduler the loop to arm a Netty scheduled task on for later deadlines, or null when
     *     the loop asks {@link #nextDeadlineNs()} itself
     */
    LoopTimers(Executor loop, LongSupplier clock, EventExecutor scheduler) {
        this(loop, clock, scheduler, IO_BEFORE_TIMERS);
    }

    /** As above, with the I/O turn before due timers on or off, for tests. */
    LoopTimers(Executor loop, LongSupplier clock, EventExecutor scheduler, boolean ioBeforeTimers) {
        this.loop = loop;
        this.clock = clock;
        this.scheduler = scheduler;
        this.ioBeforeTimers = ioBeforeTimers && scheduler == null;
    }

    long nowNs() {
        return clock.getAsLong();
    }

    /** The loop's {@link LoopClock}, looked up once, or null when the loop is not an event executor (tests). */
    private LoopClock loopClock() {
        if (loopClock == null && loop instanceof EventExecutor executor) {
            loopClock = LoopClock.of(executor);
        }
        return loopClock;
    }

    long add(long deadlineNs, TimerHandler handler) {
        long id = heap.add(deadlineNs, handler);
        if (expiryQueued && scheduler == null) {
            // The queued expiry runs every timer due by then, this one included if it is.
            return id;
        }
        long nowNs = clock.getAsLong();
        long delayNs = deadlineNs - nowNs;
        if (delayNs <= 0) {
            if (dueNowSinceIoNs == Long.MAX_VALUE) {
                dueNowSinceIoNs = nowNs;
            }
            queueExpiry();
        } else if (scheduler != null && deadlineNs < armedDeadlineNs) {
            arm(deadlineNs, delayNs);
        }
        return id;
    }

    boolean cancel(long timerId) {
        // On a TimerEventLoop the next wait already ends at the new earliest deadline; elsewhere the
        // armed task may fire early with nothing due and re-arms for the new earliest.
        return heap.cancel(timerId);
    }

    int pending() {
        return heap.size();
    }

    long fired() {
        return timersFired;
    }

    /** The earliest pending deadline ({@link Long#MAX_VALUE} when none): where the loop's wait must end. */
    long nextDeadlineNs() {
        return heap.peekDeadlineNs();
    }

    /**
     * Called by the loop as it starts a turn's tasks: queues the expiry behind them when a timer is
     * due. Reads the clock only when timers are pending.
     */
    void queueExpiryIfDue(Queue<Runnable> tasks) {
        long deadlineNs = heap.peekDeadlineNs();
        if (expiryQueued || deadlineNs == Long.MAX_VALUE) {
            return;
        }
        long lateNs = clock.getAsLong() - deadlineNs;
        if (lateNs < 0) {
            return;
        }
        if (lateNs > LATE_NS && !afterOwedTurn) {
            lateExpiries++;
        }
        if (mustPollFirst()) {
            oweIoTurn(deadlineNs);
            return;
        }
        expiryQueued = tasks.offer(expireTask);
    }

    /** Whether due timers must wait for an I/O turn: the turn before handled input, and was not one owed to them. */
    private boolean mustPollFirst() {
        return ioBeforeTimers && inputTurn && !afterOwedTurn;
    }

    private void oweIoTurn(long deadlineNs) {
        ioTurnOwed = true;
        owedDeadlineNs = deadlineNs;
    }

    /** The loop starts an I/O turn: timers scheduled for now from here on are the input's. */
    void beforeIoTurn() {
        dueNowSinceIoNs = Long.MAX_VALUE;
    }

    /** Whether the loop owes the due timers a non-blocking I/O turn before its next tasks. */
    boolean ioTurnOwed() {
        return ioTurnOwed;
    }

    /**
     * The loop's I/O turn ran; {@code handledInput} when it handled events or read datagrams (time
     * passed in which timers may have fallen due). Settles an owed turn.
     */
    void onIoTurn(boolean handledInput) {
        inputTurn = handledInput;
        afterOwedTurn = ioTurnOwed;
        if (ioTurnOwed) {
            ioTurnOwed = false;
            owedTurns++;
            if (handledInput) {
                ioTurnsWithEvents++;
            }
            if (heap.peekDeadlineNs() > owedDeadlineNs) {
                // What the I/O turn read cancelled or moved the earliest timer.
                lateTimersResolved++;
            }
        }
    }

    /** I/O turns owed to due timers (each one non-blocking poll before the expiry). */
    long owedTurns() {
        return owedTurns;
    }

    /** Owed I/O turns that found input: input that waited while the timers fell due. */
    long ioTurnsWithEvents() {
        return ioTurnsWithEvents;
    }

    /** Owed I/O turns after which the earliest timer was cancelled or moved by what they read. */
    long lateTimersResolved() {
        return lateTimersResolved;
    }

    /** Expiries that found input waiting in the loop's sockets (only with {@link #PROBE_INPUT_AT_EXPIRY}). */
    long expiriesWithInputQueued() {
        return expiriesWithInputQueued;
    }

    /** Timers those expiries fired. */
    long timersFiredWithInputQueued() {
        return timersFiredWithInputQueued;
    }

    /** Due timers found more than {@link #LATE_NS} late: the loop was busy or off its core when they fell due. */
    long lateExpiries() {
        return lateExpiries;
    }

    private void queueExpiry() {
        if (!expiryQueued) {
            expiryQueued = true;
            // A plain task on the loop's queue allocates nothing.
            loop.execute(expireTask);
        }
    }

    private void onExpireTask() {
        expiryQueued = false;
        // Queued for a timer scheduled for now while the loop handled input: a timer armed before,
        // which fell due meanwhile, waits with it for the I/O turn (the timers run in order).
        long deadlineNs = heap.peekDeadlineNs();
        if (deadlineNs < dueNowSinceIoNs && mustPollFirst()) {
            oweIoTurn(deadlineNs);
            return;
        }
        expireDue();
    }

    private void arm(long deadlineNs, long delayNs) {
        if (armed != null) {
            armed.cancel(false);
        }
        armedDeadlineNs = deadlineNs;
        armed = scheduler.schedule(scheduledExpiry, delayNs, TimeUnit.NANOSECONDS);
    }

    private void onScheduledExpiry() {
        armed = null;
        armedDeadlineNs = Long.MAX_VALUE;
        expireDue();
    }

    /** Runs the timers due now in deadline order; a timer scheduled for now by one of them runs next turn. */
    void expireDue() {
        int budget = heap.size();
        long nowNs = clock.getAsLong();
        // The handlers (completion delivery, deferred ACKs, the sends they start) read the clock
        // per packet: sampled, as in a read burst.
        LoopClock burstClock = loopClock();
        if (burstClock != null) {
            burstClock.beginBurst();
        }
        long firedBefore = timersFired;
        boolean inputQueued = PROBE_INPUT_AT_EXPIRY
                && heap.peekDeadlineNs() <= nowNs
                && LoopPollers.current().inputQueued();
        try {
            while (budget-- > 0 && heap.peekDeadlineNs() <= nowNs) {
                heap.fireEarliest(nowNs);
                timersFired++;
            }
        } finally {
            if (burstClock != null) {
                burstClock.endBurst();
            }
            if (inputQueued) {
                expiriesWithInputQueued++;
                timersFiredWithInputQueued += timersFired - firedBefore;
            }
        }
        if (scheduler != null && !heap.isEmpty()) {
            long next = heap.peekDeadlineNs();
            if (next < armedDeadlineNs) {
                long delayNs = next - clock.getAsLong();
                if (delayNs <= 0) {
                    queueExpiry();
                } else {
                    arm(next, delayNs);
                }
            }
        }
    }
}
