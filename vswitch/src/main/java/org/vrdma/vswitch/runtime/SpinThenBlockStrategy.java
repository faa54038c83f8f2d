package org.vrdma.vswitch.runtime;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * An event loop's idle strategy that polls before it sleeps, as Aeron's busy-spin/back-off agents
 * do and as RDMA applications poll their completion queues: while the loop has been idle for less
 * than {@code spinNs}, each turn polls the sockets without blocking ({@code epoll_wait} with timeout
 * 0) and runs due tasks and timers; after that it blocks in {@code epoll_wait} as usual until the
 * next event. A packet that arrives while the loop spins is handled without a wake-up (no sleeping
 * thread for the sender's system call to wake, no idle CPU to bring back), which saves the
 * scheduler round trip per packet at the price of a busy core while traffic flows. {@code spinNs =
 * 0} is Netty's default strategy.
 *
 * <p>Each poll that finds nothing is followed by {@code sched_yield}: a thread waiting for this core
 * runs first. That matters for a request/response exchange: a synchronous wake-up places the woken
 * peer loop on the waker's core, and without the yield the peer would wait there until the spin ends.
 * With it the two loops take turns on one core without sleeping, or spin on one core each once the
 * scheduler has spread them.
 *
 * <p><b>Adaptive.</b> Spinning only pays while the loops have the cores to themselves. When other
 * threads want the cores, a spinning loop uses up its share of the CPU doing nothing and then waits
 * behind them, so a packet waits for the scheduler's next turn (milliseconds) instead of being
 * handled at once; a sleeping loop instead is woken with priority. So the strategy watches the gap
 * between two polls of one spin: a gap over {@link #SLICE_GAP_NS}, or two over {@link
 * #PREEMPTED_GAP_NS} within {@link #SHORT_GAPS_WINDOW_NS}, mean other threads want the core (a lone
 * short gap is a thread that ran briefly, and is only counted), and the loop then blocks at once for
 * a back-off period: {@link #MIN_BACKOFF_NS}, doubling
 * while such gaps keep recurring, up to {@link #MAX_BACKOFF_NS}, halved again after every {@link
 * #DECAY_HITS} datagrams the spin found without losing its core in between, and back to the minimum
 * after {@link #QUIET_NS} of spinning without a lost core. So the back-off settles where losing the
 * core is rare next to what the spin finds: on a loaded machine the loop mostly sleeps as it would
 * without polling; on an idle one it polls; in between it polls for the stretches the scheduler lets
 * it, and recovers from a burst of load within a few hundred hops instead of only after a quiet
 * {@link #QUIET_NS}.
 *
 * <p><b>Direct polls.</b> When the loop's thread has {@link LoopPollers} (the underlay receivers of
 * the hosts on it), the spin calls them instead of {@code epoll_wait(0)}: a datagram costs the one
 * {@code recvmmsg} that reads it. Epoll is asked every {@link #DIRECT_POLLS_PER_SELECT} empty polls
 * and once before the loop blocks. A poll that finds datagrams is taken for a lost core only
 * after a gap of over {@link #PREEMPTED_HIT_GAP_NS} (the peer ran in the yield, which is what the
 * yield is for, but not for a scheduler slice), and the time spent handling them does not count as
 * a gap.
 *
 * <p>One instance per event loop (Netty asks the factory once per loop); not thread-safe.
 */
public final class SpinThenBlockStrategy implements SelectStrategy {
    /** A gap between two polls of one spin longer than this means the thread was descheduled. */
    public static final long PREEMPTED_GAP_NS = 50_000;

    /**
     * A poll that finds datagrams after a gap longer than this also means the thread was
     * descheduled: the peer's hop, run in this loop's yield on a shared core, takes a few tens of
     * microseconds, while another process given the core by the yield keeps it for a scheduler slice
     * (a millisecond or more), and the datagram waited that long. The datagrams are handled, and the
     * loop then backs off as after an empty poll's gap.
     */
    public static final long PREEMPTED_HIT_GAP_NS = 300_000;

    /**
     * A gap between two empty polls longer than this is a scheduler slice given to another thread:
     * the loop backs off at once. A shorter one (over {@link #PREEMPTED_GAP_NS}) starts a back-off only
     * when another follows within {@link #SHORT_GAPS_WINDOW_NS}.
     */
    public static final long SLICE_GAP_NS = PREEMPTED_HIT_GAP_NS;

    /**
     * {@code -Dvrdma.busyPoll.tolerateShortGaps=false} backs off after any gap over {@link
     * #PREEMPTED_GAP_NS}, as before short gaps were told apart (to compare the two).
     */
    static final boolean TOLERATE_SHORT_GAPS = !"false".equals(System.getProperty("vrdma.busyPoll.tolerateShortGaps"));

    /** Two short gaps this close together mean the core is contended, not just visited. */
    public static final long SHORT_GAPS_WINDOW_NS = 1_000_000;

    /**
     * The shortest back-off, and the first after a quiet period. A lone lost core (under load, one
     * every few tens of milliseconds per loop even while the spins find most datagrams) then costs
     * a few milliseconds of sleeping hops, not ten; recurring losses still double it. It was 10 ms;
     * {@code -Dvrdma.busyPoll.minBackoffMs} sets it.
     */
    public static final long MIN_BACKOFF_NS = Long.getLong("vrdma.busyPoll.minBackoffMs", 2) * 1_000_000;
    /**
     * The longest back-off. It ends in a spin that either loses its core again (one hop delayed by a
     * scheduler slice, and the next back-off) or finds datagrams, which shorten the back-offs again:
     * so this bounds how long a loop keeps sleeping after the load that made it back off is gone. It
     * was 640 ms, which outlasted whole latency runs; {@code -Dvrdma.busyPoll.maxBackoffMs} sets it.
     */
    public static final long MAX_BACKOFF_NS = Long.getLong("vrdma.busyPoll.maxBackoffMs", 80) * 1_000_000;

    /**
     * The back-off starts again from its minimum when the loop spun this long after the last back-off
     * without losing its core: an occasional preemption on an idle machine costs one short back-off.
     */
    public static final long QUIET_NS = 100_000_000L;

    /**
     * Datagrams found by a spin, without a lost core in between, that halve the next back-off (down
     * to {@link #MIN_BACKOFF_NS}). One back-off doubles it, so the back-off shrinks while the loop
     * loses its core less than once per this many hits and grows while it loses it more often: a
     * lost core delays one hop by a scheduler slice, a hit saves a wake-up on every hop.
     */
    public static final int DECAY_HITS = 128;

    /**
     * {@code -Dvrdma.busyPoll.decay=false} keeps the back-off at its length until {@link #QUIET_NS}
     * of spinning without a lost core, as before hits shortened it (to compare the two).
     */
    static final boolean DECAY = !"false".equals(System.getProperty("vrdma.busyPoll.decay"));

    /**
     * While the loop polls its sockets directly, every this many empty direct polls it also asks
     * epoll (for its other descriptors).
     */
    public static final int DIRECT_POLLS_PER_SELECT = 8;

    private final long spinNs;
    private final boolean decay;
    private final LongSupplier clock;
    private final Runnable yield;
    private final Supplier<LoopPollers> pollersOfThisThread;
    private LoopPollers pollers;
    private int directPollsSinceSelect;
    /** The last direct poll (or epoll before blocking) found something, handled since. */
    private boolean handledSinceLastPoll;
    /** ... and it was datagrams read directly (not epoll's events before blocking). */
    private boolean readSinceLastPoll;

    private boolean idle;
    private long idleSinceNs;
    private long lastPollNs;
    private long backoffNs = MIN_BACKOFF_NS;
    private long backoffUntilNs;
    private long backoffStartNs;
    /** Back-off time of the back-offs that ended, up to their end. */
    private long backoffServedNs;

    private long lastPreemptedNs;
    private long lastBackoffNs;
    private boolean preemptedBefore;
    private boolean backingOff;
    /** Hits since the last lost core or the last halving of the back-off. */
    private int cleanHits;

    private long decays;

    private long spinPolls;
    private long spinHits;
    private long directHits;
    private long preemptedSpins;
    private long expiredSpins;
    private long shortGaps;
    private long lastShortGapNs;
    private boolean shortGapBefore;
    private final long[] gaps = new long[4];
    private long backoffTotalNs;

    public SpinThenBlockStrategy(long spinNs) {
        this(spinNs, System::nanoTime, Thread::yield, LoopPollers::current);
    }

    /** With an explicit clock and yield and no direct pollers, for tests. */
    SpinThenBlockStrategy(long spinNs, LongSupplier clock, Runnable yield) {
        this(spinNs, clock, yield, LoopPollers::new);
    }

    /**
     * With an explicit clock, yield and direct pollers, for tests; {@code pollers} is asked once, on
     * the loop's thread.
     */
    SpinThenBlockStrategy(long spinNs, LongSupplier clock, Runnable yield, Supplier<LoopPollers> pollers) {
        this(spinNs, clock, yield, pollers, DECAY);
    }

    /** As above, with the back-off's decay on or off ({@link #DECAY_HITS}), for tests. */
    SpinThenBlockStrategy(
            long spinNs, LongSupplier clock, Runnable yield, Supplier<LoopPollers> pollers, boolean decay) {
        this.spinNs = spinNs;
        this.decay = decay;
        this.clock = clock;
        this.yield = yield;
        this.pollersOfThisThread = pollers;
    }

    @Override
    public int calculateStrategy(IntSupplier selectSupplier, boolean hasTasks) throws Exception {
        if (backingOff && !hasTasks) {
            long nowNs = clock.getAsLong();
            if (nowNs - backoffUntilNs < 0) {
                // Netty's default: block without a poll first.
                return SelectStrategy.SELECT;
            }
            backingOff = false;
            backoffServedNs += backoffUntilNs - backoffStartNs;
        }
        if (pollers == null) {
            pollers = pollersOfThisThread.get();
        }
        if (idle && !hasTasks && !pollers.isEmpty() && directPollsSinceSelect < DIRECT_POLLS_PER_SELECT) {
            return pollDirectly(selectSupplier);
        }
        directPollsSinceSelect = 0;
        int ready = selectSupplier.get();
        if (ready > 0 || hasTasks) {
            if (idle && ready > 0) {
                spinHits++;
                boolean lost = false;
                if (!hasTasks && !handledSinceLastPoll) {
                    long nowNs = clock.getAsLong();
                    if (nowNs - lastPollNs > PREEMPTED_HIT_GAP_NS) {
                        backOff(nowNs, nowNs - lastPollNs);
                        lost = true;
                    }
                }
                if (!lost) {
                    onCleanHit();
                }
            }
            idle = false;
            return ready;
        }
        long nowNs = clock.getAsLong();
        if (!idle) {
            idle = true;
            handledSinceLastPoll = false;
            readSinceLastPoll = false;
            idleSinceNs = nowNs;
            lastPollNs = nowNs;
            yield.run();
            return SelectStrategy.CONTINUE;
        }
        long gapNs = nowNs - lastPollNs;
        lastPollNs = nowNs;
        if (gapNs > PREEMPTED_GAP_NS && lostTheCore(nowNs, gapNs)) {
            return backOff(nowNs, gapNs);
        }
        return spinOrBlock(nowNs);
    }

    /**
     * A spin turn that reads the loop's sockets itself: a datagram costs the one read that finds it,
     * not an {@code epoll_wait} and then the reads. Epoll is still asked every {@link
     * #DIRECT_POLLS_PER_SELECT} empty polls, for the loop's other descriptors.
     */
    private int pollDirectly(IntSupplier selectSupplier) throws Exception {
        long nowNs = clock.getAsLong();
        if (handledSinceLastPoll) {
            // The time since the last poll was spent on what it found, not lost to other threads;
            // after datagrams read here the spin starts again from now.
            handledSinceLastPoll = false;
            lastPollNs = nowNs;
            if (readSinceLastPoll) {
                readSinceLastPoll = false;
                idleSinceNs = nowNs;
            }
        }
        if (pollers.pollAll() > 0) {
            if (nowNs - lastPollNs > PREEMPTED_HIT_GAP_NS) {
                // Found after the core was lost for a scheduler slice: handled, then sleep for a while.
                spinHits++;
                directHits++;
                handledSinceLastPoll = true;
                readSinceLastPoll = true;
                backOff(nowNs, nowNs - lastPollNs);
                return SelectStrategy.CONTINUE;
            }
            // Handled here: the loop runs the tasks the datagrams queued (the flush), then spins on
            // for the whole spin time again, still without asking epoll. (As with epoll, a poll that
            // finds something is no lost core, however long since the last: the peer may have run
            // on this core in the yield, which is the point of it.)
            spinHits++;
            directHits++;
            handledSinceLastPoll = true;
            readSinceLastPoll = true;
            onCleanHit();
            return SelectStrategy.CONTINUE;
        }
        long gapNs = nowNs - lastPollNs;
        lastPollNs = nowNs;
        if (gapNs > PREEMPTED_GAP_NS && lostTheCore(nowNs, gapNs)) {
            return backOff(nowNs, gapNs);
        }
        directPollsSinceSelect++;
        spinPolls++;
        if (nowNs - idleSinceNs < spinNs) {
            yield.run();
            return SelectStrategy.CONTINUE;
        }
        // Before blocking, epoll hands back the edges of datagrams already read here (their reads
        // find nothing) and anything else ready; the next turn polls once more, then blocks.
        directPollsSinceSelect = 0;
        int ready = selectSupplier.get();
        if (ready > 0) {
            handledSinceLastPoll = true;
            return ready;
        }
        idle = false;
        expiredSpins++;
        return SelectStrategy.SELECT;
    }

    /**
     * Whether a gap of over {@link #PREEMPTED_GAP_NS} between two empty polls means the loop lost its
     * core to other work: a gap as long as a scheduler slice ({@link #SLICE_GAP_NS}) does, and so does
     * a second shorter one within {@link #SHORT_GAPS_WINDOW_NS} of the previous. A single short gap is
     * a thread that woke briefly (a timer, the JVM's own threads, a waiting application thread): on a
     * machine whose other cores are idle it costs the spin only that gap, while a back-off would
     * cost a wake-up per hop for ten milliseconds or more.
     */
    private boolean lostTheCore(long nowNs, long gapNs) {
        if (gapNs > SLICE_GAP_NS || !TOLERATE_SHORT_GAPS) {
            return true;
        }
        shortGaps++;
        boolean again = shortGapBefore && nowNs - lastShortGapNs < SHORT_GAPS_WINDOW_NS;
        shortGapBefore = true;
        lastShortGapNs = nowNs;
        return again;
    }

    /** A spin found datagrams without losing its core: every {@link #DECAY_HITS} of them halve the next back-off. */
    private void onCleanHit() {
        if (!decay || ++cleanHits < DECAY_HITS) {
            return;
        }
        cleanHits = 0;
        if (backoffNs > MIN_BACKOFF_NS) {
            backoffNs = Math.max(MIN_BACKOFF_NS, backoffNs / 2);
            decays++;
        }
    }

    /** Lost the core while spinning: sleep instead, for a while; longer each time unless the last time was long ago. */
    private int backOff(long nowNs, long gapNs) {
        preemptedSpins++;
        cleanHits = 0;
        gaps[gapNs < 100_000 ? 0 : gapNs < 300_000 ? 1 : gapNs < 1_000_000 ? 2 : 3]++;
        idle = false;
        if (!preemptedBefore || nowNs - lastPreemptedNs > lastBackoffNs + QUIET_NS) {
            backoffNs = MIN_BACKOFF_NS;
        }
        preemptedBefore = true;
        lastPreemptedNs = nowNs;
        lastBackoffNs = backoffNs;
        if (backingOff) {
            // Tasks ran during a back-off and a spin lost its core again: the old one ends here.
            backoffServedNs += Math.min(nowNs, backoffUntilNs) - backoffStartNs;
        }
        backingOff = true;
        backoffStartNs = nowNs;
        backoffUntilNs = nowNs + backoffNs;
        backoffTotalNs += backoffNs;
        backoffNs = Math.min(MAX_BACKOFF_NS, backoffNs * 2);
        return SelectStrategy.SELECT;
    }

    private int spinOrBlock(long nowNs) {
        spinPolls++;
        if (nowNs - idleSinceNs < spinNs) {
            // Lets a thread waiting for this core run first: the peer loop woken onto this core
            // (synchronous wake-ups place it there) handles its datagram now, not after the spin.
            yield.run();
            return SelectStrategy.CONTINUE;
        }
        idle = false;
        expiredSpins++;
        return SelectStrategy.SELECT;
    }

    /** Polls made while spinning with nothing ready. */
    public long spinPolls() {
        return spinPolls;
    }

    /** Spins that ended with an event (a datagram handled without a wake-up). */
    public long spinHits() {
        return spinHits;
    }

    /** Spins that ended with a datagram read directly (see {@link LoopPollers}), without epoll. */
    public long directHits() {
        return directHits;
    }

    /** Spins cut short because the thread lost its core; each starts a back-off. */
    public long preemptedSpins() {
        return preemptedSpins;
    }

    /** Gaps between polls shorter than a scheduler slice (see {@link #SLICE_GAP_NS}), whether or not they started a back-off. */
    public long shortGaps() {
        return shortGaps;
    }

    /** Spins that ran their whole time without finding anything; the loop then sleeps until the next event. */
    public long expiredSpins() {
        return expiredSpins;
    }

    /** The gaps that started back-offs, by length: under 100 µs, under 300 µs, under 1 ms, longer. */
    public long[] backoffGaps() {
        return gaps.clone();
    }

    /** Back-off periods started so far, summed: time the loop blocked without polling. */
    public long backoffTotalNs() {
        return backoffTotalNs;
    }

    /**
     * Time spent backing off so far, the current back-off up to now included (read the loop's clock;
     * unlike {@link #backoffTotalNs()}, a back-off begun before a measurement counts only from its
     * start on).
     */
    public long backoffServedNs() {
        if (!backingOff) {
            return backoffServedNs;
        }
        return backoffServedNs + Math.min(clock.getAsLong(), backoffUntilNs) - backoffStartNs;
    }

    /** Times the next back-off was halved after {@link #DECAY_HITS} hits without a lost core. */
    public long backoffDecays() {
        return decays;
    }

    /** How long the next back-off will last, if the loop loses its core before the back-off decays or resets. */
    public long nextBackoffNs() {
        return backoffNs;
    }

    /** Whether the loop currently blocks without polling, after a preempted spin. */
    public boolean backingOff() {
        return backingOff;
    }
}
