package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;

/** The idle strategy's decisions, on a clock the test moves. */
class SpinThenBlockStrategyTest {
    private static final long SPIN_NS = 100_000;

    private long nowNs = 1_000_000_000L;
    private int ready;
    private int polls;
    private int yields;
    private final SpinThenBlockStrategy strategy = new SpinThenBlockStrategy(SPIN_NS, () -> nowNs, () -> yields++);

    private int turn(boolean hasTasks) throws Exception {
        return strategy.calculateStrategy(
                () -> {
                    polls++;
                    return ready;
                },
                hasTasks);
    }

    @Test
    void pollsWithoutBlockingForTheSpinTimeThenBlocks() throws Exception {
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        for (int i = 0; i < 99; i++) {
            nowNs += 1_000;
            assertThat(turn(false)).as("poll %d", i).isEqualTo(SelectStrategy.CONTINUE);
        }
        nowNs += 1_000;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(polls).isEqualTo(101);
        // Every empty poll of the spin gives the core to a thread waiting for it.
        assertThat(yields).isEqualTo(100);
        assertThat(strategy.preemptedSpins()).isZero();
        assertThat(strategy.backingOff()).isFalse();
        assertThat(strategy.expiredSpins()).isEqualTo(1);
        assertThat(strategy.backoffTotalNs()).isZero();
    }

    @Test
    void anEventDuringTheSpinIsHandledAndCountedAsAHit() throws Exception {
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += 2_000;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        ready = 1;
        nowNs += 2_000;
        assertThat(turn(false)).isEqualTo(1);
        assertThat(strategy.spinHits()).isEqualTo(1);
        // Pending tasks never spin or block: the loop polls and runs them.
        ready = 0;
        assertThat(turn(true)).isZero();
    }

    @Test
    void aSpinThatLosesItsCoreBacksOffAndTheBackOffGrowsWhileThatRepeats() throws Exception {
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(strategy.preemptedSpins()).isEqualTo(1);
        assertThat(strategy.backingOff()).isTrue();

        // While backing off the loop blocks at once, without a poll first.
        int pollsBefore = polls;
        nowNs += SpinThenBlockStrategy.MIN_BACKOFF_NS - 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(polls).isEqualTo(pollsBefore);

        // After it, spinning resumes; preempted again, the next back-off is twice as long.
        nowNs += 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        nowNs += 2 * SpinThenBlockStrategy.MIN_BACKOFF_NS - 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(strategy.backingOff()).isTrue();
        nowNs += 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        assertThat(strategy.preemptedSpins()).isEqualTo(2);

        // A spin that ends with an event does not shorten the back-off: a third gap soon after
        // backs off for four times the minimum.
        ready = 1;
        nowNs += 1_000;
        assertThat(turn(false)).isEqualTo(1);
        assertThat(strategy.spinHits()).isEqualTo(1);
        ready = 0;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        nowNs += 4 * SpinThenBlockStrategy.MIN_BACKOFF_NS - 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        nowNs += 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);

        // After a quiet period without gaps, the back-off starts from its minimum again.
        for (int i = 0; i < SpinThenBlockStrategy.QUIET_NS / 50_000; i++) {
            nowNs += 40_000;
            turn(false);
            nowNs += 10_000;
            ready = 1;
            turn(false);
            ready = 0;
        }
        turn(false);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(strategy.preemptedSpins()).isEqualTo(4);
        nowNs += SpinThenBlockStrategy.MIN_BACKOFF_NS;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
    }

    /**
     * A datagram found after the loop lost its core for a scheduler slice (the yield gave the core
     * to another process) waited that long: it is handled, and the loop then backs off, whether
     * epoll or a direct read found it. Found after the peer's hop in the yield, it is a plain hit.
     */
    @Test
    void aDatagramFoundAfterAScheduledSliceIsHandledAndTheLoopBacksOff() throws Exception {
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.PREEMPTED_HIT_GAP_NS;
        ready = 1;
        assertThat(turn(false)).as("the peer's hop in the yield").isEqualTo(1);
        assertThat(strategy.backingOff()).isFalse();
        ready = 0;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.PREEMPTED_HIT_GAP_NS + 1;
        ready = 1;
        assertThat(turn(false)).as("handled").isEqualTo(1);
        assertThat(strategy.spinHits()).isEqualTo(2);
        assertThat(strategy.preemptedSpins()).isEqualTo(1);
        assertThat(strategy.backingOff()).isTrue();
        ready = 0;
        int pollsBefore = polls;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(polls).isEqualTo(pollsBefore);

        LoopPollers pollers = new LoopPollers();
        int[] socket = {0};
        pollers.add(() -> {
            int n = socket[0];
            socket[0] = 0;
            return n;
        });
        SpinThenBlockStrategy direct = new SpinThenBlockStrategy(SPIN_NS, () -> nowNs, () -> yields++, () -> pollers);
        io.netty.util.IntSupplier select = () -> 0;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += 1_000;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        socket[0] = 1;
        nowNs += SpinThenBlockStrategy.PREEMPTED_HIT_GAP_NS + 1;
        assertThat(direct.calculateStrategy(select, false))
                .as("read and handled")
                .isEqualTo(SelectStrategy.CONTINUE);
        assertThat(socket[0]).isZero();
        assertThat(direct.directHits()).isEqualTo(1);
        assertThat(direct.preemptedSpins()).isEqualTo(1);
        assertThat(direct.backingOff()).isTrue();
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.SELECT);
    }

    /**
     * A gap shorter than a scheduler slice is a thread that ran briefly on this core: the spin goes
     * on. A second one soon after means the core is contended, and the loop backs off; short gaps far
     * apart never do.
     */
    @Test
    void aShortGapAloneDoesNotBackOffButTwoInQuickSuccessionDo() throws Exception {
        long shortGapNs = SpinThenBlockStrategy.PREEMPTED_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        for (int i = 0; i < 5; i++) {
            nowNs += shortGapNs;
            assertThat(turn(false)).as("short gap %d", i).isEqualTo(SelectStrategy.CONTINUE);
            assertThat(strategy.backingOff()).isFalse();
            // The spin runs out; the loop sleeps until an event wakes it after the window, and the
            // next spin's short gap is again the first in the window.
            int strategyNow;
            do {
                nowNs += 10_000;
                strategyNow = turn(false);
            } while (strategyNow == SelectStrategy.CONTINUE);
            assertThat(strategyNow).isEqualTo(SelectStrategy.SELECT);
            nowNs += SpinThenBlockStrategy.SHORT_GAPS_WINDOW_NS;
            ready = 1;
            assertThat(turn(false)).isEqualTo(1);
            ready = 0;
            assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        }
        assertThat(strategy.shortGaps()).isEqualTo(5);
        assertThat(strategy.preemptedSpins()).isZero();

        // Two within the window: a back-off, whose gap is counted among the shortest.
        nowNs += shortGapNs;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += 10_000;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += shortGapNs;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(strategy.preemptedSpins()).isEqualTo(1);
        assertThat(strategy.backingOff()).isTrue();
        assertThat(strategy.backoffGaps()).containsExactly(1, 0, 0, 0);
        assertThat(strategy.backoffTotalNs()).isEqualTo(SpinThenBlockStrategy.MIN_BACKOFF_NS);

        // A gap just over a slice backs off at once, even long after the last short one.
        nowNs += SpinThenBlockStrategy.MIN_BACKOFF_NS;
        assertThat(turn(false)).isEqualTo(SelectStrategy.CONTINUE);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(turn(false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(strategy.preemptedSpins()).isEqualTo(2);
        assertThat(strategy.backoffGaps()).containsExactly(1, 0, 1, 0);
    }

    @Test
    void tasksDuringABackOffStillRunAtOnce() throws Exception {
        turn(false);
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        turn(false);
        assertThat(strategy.backingOff()).isTrue();
        ready = 2;
        assertThat(turn(true)).isEqualTo(2);
    }

    /**
     * With a socket it can read itself, the spinning loop reads it instead of asking epoll: a
     * datagram is found by one read, and epoll is asked only every few empty polls and before the
     * loop blocks.
     */
    @Test
    void aSpinReadsItsSocketsDirectlyAndAsksEpollOnlyNowAndThen() throws Exception {
        LoopPollers pollers = new LoopPollers();
        int[] socket = {0};
        int[] reads = {0};
        pollers.add(() -> {
            reads[0]++;
            int n = socket[0];
            socket[0] = 0;
            return n;
        });
        SpinThenBlockStrategy direct = new SpinThenBlockStrategy(SPIN_NS, () -> nowNs, () -> yields++, () -> pollers);
        io.netty.util.IntSupplier select = () -> {
            polls++;
            return ready;
        };
        // Not yet idle: the loop asks epoll as usual, then starts spinning.
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        assertThat(polls).isEqualTo(1);
        assertThat(reads[0]).isZero();

        // Empty direct polls; epoll is asked once every DIRECT_POLLS_PER_SELECT of them.
        int turns = 3 * SpinThenBlockStrategy.DIRECT_POLLS_PER_SELECT;
        for (int i = 0; i < turns; i++) {
            nowNs += 1_000;
            assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        }
        assertThat(polls - 1).isEqualTo(turns / (SpinThenBlockStrategy.DIRECT_POLLS_PER_SELECT + 1));
        assertThat(reads[0]).isEqualTo(turns - (polls - 1));

        // A datagram arrives: the next poll reads it and the loop runs its tasks; no epoll call. The
        // peer that sent it ran in the yield, for longer than a preemption gap: a poll that finds
        // something is not a lost core.
        int pollsBefore = polls;
        socket[0] = 2;
        nowNs += 2 * SpinThenBlockStrategy.PREEMPTED_GAP_NS;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        assertThat(socket[0]).isZero();
        assertThat(polls).isEqualTo(pollsBefore);
        assertThat(direct.directHits()).isEqualTo(1);
        assertThat(direct.spinHits()).isEqualTo(1);

        // Handling that datagram took longer than a preemption gap: that is work, not a lost core,
        // so the spin goes on (and restarts from here) instead of backing off.
        socket[0] = 1;
        nowNs += 1_000;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        assertThat(direct.directHits()).isEqualTo(2);
        nowNs += 3 * SpinThenBlockStrategy.PREEMPTED_GAP_NS;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        assertThat(direct.preemptedSpins()).isZero();
        assertThat(direct.backingOff()).isFalse();
        // A slice-long gap between two empty polls is still a lost core.
        nowNs += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(direct.preemptedSpins()).isEqualTo(1);
        nowNs += SpinThenBlockStrategy.MIN_BACKOFF_NS;
        ready = 1;
        assertThat(direct.calculateStrategy(select, false)).isEqualTo(1);
        ready = 0;
        pollsBefore = polls;

        // Pending tasks go through epoll (and run), as without direct polling.
        assertThat(direct.calculateStrategy(select, true)).isZero();
        assertThat(polls).isEqualTo(pollsBefore + 1);

        // A new spin lasts SPIN_NS; then epoll is asked once more before the loop blocks (it hands
        // back the edges of what was read directly).
        int spun = 0;
        int strategy;
        int pollsBeforeTurn;
        do {
            nowNs += 1_000;
            pollsBeforeTurn = polls;
            strategy = direct.calculateStrategy(select, false);
            spun++;
        } while (strategy == SelectStrategy.CONTINUE && spun < 1_000);
        assertThat(strategy).isEqualTo(SelectStrategy.SELECT);
        assertThat(spun).isBetween((int) (SPIN_NS / 1_000) - 1, (int) (SPIN_NS / 1_000) + 1);
        assertThat(polls - pollsBeforeTurn).as("epoll asked before blocking").isEqualTo(1);
        assertThat(direct.preemptedSpins()).isEqualTo(1);
    }

    /** One ping-pong hop found by the spin: an empty poll, then the datagram 10 µs later. */
    private static void hit(SpinThenBlockStrategy s, long[] clock) throws Exception {
        clock[0] += 1_000;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock[0] += 10_000;
        assertThat(s.calculateStrategy(() -> 1, false)).isEqualTo(1);
    }

    /** The spin loses its core for a scheduler slice; returns the back-off that starts. */
    private static long lose(SpinThenBlockStrategy s, long[] clock) throws Exception {
        long before = s.backoffTotalNs();
        clock[0] += 1_000;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock[0] += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
        long backoffNs = s.backoffTotalNs() - before;
        // Sleeps through the back-off; an event then wakes the loop.
        clock[0] += backoffNs;
        assertThat(s.calculateStrategy(() -> 1, false)).isEqualTo(1);
        return backoffNs;
    }

    /**
     * The back-off recovers while the spin keeps finding datagrams: every DECAY_HITS hits without a
     * lost core halve the next back-off, well before a quiet period would reset it; a lost core in
     * between starts the count again. With the decay off the back-off stays at its length.
     */
    @Test
    void hitsWithoutALostCoreHalveTheNextBackOff() throws Exception {
        long[] clock = {nowNs};
        SpinThenBlockStrategy s = new SpinThenBlockStrategy(SPIN_NS, () -> clock[0], () -> {}, LoopPollers::new, true);
        long min = SpinThenBlockStrategy.MIN_BACKOFF_NS;
        assertThat(SpinThenBlockStrategy.MAX_BACKOFF_NS).isGreaterThanOrEqualTo(8 * min);
        assertThat(lose(s, clock)).isEqualTo(min);
        assertThat(lose(s, clock)).isEqualTo(2 * min);
        assertThat(s.nextBackoffNs()).isEqualTo(4 * min);

        // One short of the count, a lost core: no decay, and the count starts again.
        for (int i = 0; i < SpinThenBlockStrategy.DECAY_HITS - 1; i++) {
            hit(s, clock);
        }
        assertThat(lose(s, clock)).isEqualTo(4 * min);
        for (int i = 0; i < SpinThenBlockStrategy.DECAY_HITS - 1; i++) {
            hit(s, clock);
        }
        assertThat(s.backoffDecays()).isZero();
        assertThat(s.nextBackoffNs()).isEqualTo(8 * min);

        // The count reached: halved, and halved again per further count, down to the minimum.
        hit(s, clock);
        assertThat(s.backoffDecays()).isEqualTo(1);
        assertThat(s.nextBackoffNs()).isEqualTo(4 * min);
        for (int i = 0; i < 10 * SpinThenBlockStrategy.DECAY_HITS; i++) {
            hit(s, clock);
        }
        assertThat(s.nextBackoffNs()).isEqualTo(min);
        assertThat(s.backoffDecays()).isEqualTo(3);
        // The hits took far less than the quiet period that would have reset it.
        assertThat(11L * SpinThenBlockStrategy.DECAY_HITS * 11_000).isLessThan(SpinThenBlockStrategy.QUIET_NS);
        assertThat(lose(s, clock)).isEqualTo(min);
        assertThat(s.preemptedSpins()).isEqualTo(4);
        // Back-offs served, each to its end; one under way counts up to now.
        assertThat(s.backoffServedNs()).isEqualTo(s.backoffTotalNs()).isEqualTo(8 * min);
        clock[0] += 1_000;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock[0] += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
        clock[0] += min / 2;
        assertThat(s.backoffServedNs()).isEqualTo(8 * min + min / 2);
        // (This one doubled: it came soon after the last.)
        assertThat(s.backoffTotalNs()).isEqualTo(10 * min);

        // The same history without the decay keeps the back-off where the losses left it.
        clock[0] = nowNs;
        SpinThenBlockStrategy fixed =
                new SpinThenBlockStrategy(SPIN_NS, () -> clock[0], () -> {}, LoopPollers::new, false);
        lose(fixed, clock);
        lose(fixed, clock);
        for (int i = 0; i < 4 * SpinThenBlockStrategy.DECAY_HITS; i++) {
            hit(fixed, clock);
        }
        assertThat(fixed.backoffDecays()).isZero();
        assertThat(lose(fixed, clock)).isEqualTo(4 * min);
    }

    /** Back-offs double while the core keeps being lost, up to MAX_BACKOFF_NS and no further. */
    @Test
    void theBackOffStopsGrowingAtItsMaximum() throws Exception {
        long[] clock = {nowNs};
        SpinThenBlockStrategy s = new SpinThenBlockStrategy(SPIN_NS, () -> clock[0], () -> {}, LoopPollers::new, true);
        long expected = SpinThenBlockStrategy.MIN_BACKOFF_NS;
        for (int i = 0; i < 12; i++) {
            assertThat(lose(s, clock)).as("back-off %d", i).isEqualTo(expected);
            expected = Math.min(SpinThenBlockStrategy.MAX_BACKOFF_NS, 2 * expected);
        }
        assertThat(s.nextBackoffNs()).isEqualTo(SpinThenBlockStrategy.MAX_BACKOFF_NS);
    }

    /** Datagrams read directly while spinning count as hits for the decay too. */
    @Test
    void directReadsDecayTheBackOff() throws Exception {
        LoopPollers pollers = new LoopPollers();
        int[] socket = {0};
        pollers.add(() -> {
            int n = socket[0];
            socket[0] = 0;
            return n;
        });
        long[] clock = {nowNs};
        SpinThenBlockStrategy s = new SpinThenBlockStrategy(SPIN_NS, () -> clock[0], () -> {}, () -> pollers, true);
        io.netty.util.IntSupplier select = () -> 0;
        assertThat(s.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock[0] += SpinThenBlockStrategy.SLICE_GAP_NS + 1;
        assertThat(s.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
        assertThat(s.nextBackoffNs()).isEqualTo(2 * SpinThenBlockStrategy.MIN_BACKOFF_NS);
        clock[0] += SpinThenBlockStrategy.MIN_BACKOFF_NS;
        assertThat(s.calculateStrategy(() -> 1, false)).isEqualTo(1);
        assertThat(s.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        for (int i = 0; i < SpinThenBlockStrategy.DECAY_HITS; i++) {
            clock[0] += 10_000;
            socket[0] = 1;
            assertThat(s.calculateStrategy(select, false)).isEqualTo(SelectStrategy.CONTINUE);
        }
        assertThat(s.directHits()).isEqualTo(SpinThenBlockStrategy.DECAY_HITS);
        assertThat(s.backoffDecays()).isEqualTo(1);
        assertThat(s.nextBackoffNs()).isEqualTo(SpinThenBlockStrategy.MIN_BACKOFF_NS);
    }
}
