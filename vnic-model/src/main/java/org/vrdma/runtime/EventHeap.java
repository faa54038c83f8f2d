package org.vrdma.runtime;

import java.util.Arrays;

/**
 * The pending timers of both drivers (the virtual-time scheduler and the real-time event-loop timer
 * service), ordered by deadline, then by the order they were added: a 4-ary min-heap whose entries (deadline, sequence number, id) sit in primitive
 * arrays in heap order, so a sift compares neighbouring longs instead of chasing slot indices, and
 * nothing is allocated per event once the arrays have grown to the working size.
 *
 * <p>Cancelling is lazy: the handler's slot is freed at once and its generation bumped, and the
 * stale heap entry is dropped when it reaches the top (or when stale entries outnumber live ones,
 * by one rebuild). The order of the live events is a total order on (deadline, sequence), so
 * neither the heap's shape nor the cancellations change which event runs next: the same inputs
 * always give the same sequence of events.
 *
 * <p>A timer id packs a slot number with that slot's generation, so cancelling an id whose event
 * already ran (and whose slot was reused) is a harmless no-op. Not thread-safe.
 */
public final class EventHeap {
    private static final int INITIAL_CAPACITY = 64;
    private static final int MIN_PURGE = 1024;

    // Heap order: entry i has children 4i+1 .. 4i+4.
    private long[] deadlineNs;
    private long[] sequence;
    private long[] ids;
    private int heapSize;
    private int stale;
    private long nextSequence;

    // Per slot: the handler of a pending event (null when free) and the slot's current generation.
    private TimerHandler[] handlers;
    private int[] generation;
    private int[] freeSlots;
    private int freeCount;
    private int slotsInUse;

    public EventHeap() {
        this(INITIAL_CAPACITY);
    }

    public EventHeap(int initialCapacity) {
        int capacity = Math.max(4, initialCapacity);
        deadlineNs = new long[capacity];
        sequence = new long[capacity];
        ids = new long[capacity];
        handlers = new TimerHandler[capacity];
        generation = new int[capacity];
        freeSlots = new int[capacity];
    }

    /** Adds an event and returns its id (always positive). */
    public long add(long deadline, TimerHandler handler) {
        if (handler == null) {
            throw new NullPointerException("handler");
        }
        int slot = allocateSlot();
        handlers[slot] = handler;
        long id = ((long) generation[slot] << 32) | (slot + 1L);
        if (heapSize == deadlineNs.length) {
            growHeap();
        }
        siftUp(heapSize++, deadline, nextSequence++, id);
        return id;
    }

    /** Removes a pending event; false when the id is not pending. */
    public boolean cancel(long timerId) {
        int slot = pendingSlot(timerId);
        if (slot < 0) {
            return false;
        }
        releaseSlot(slot);
        stale++;
        if (stale > MIN_PURGE && stale > heapSize >>> 1) {
            purge();
        }
        return true;
    }

    /** Whether the event with this id is still pending. */
    public boolean isPending(long timerId) {
        return pendingSlot(timerId) >= 0;
    }

    public boolean isEmpty() {
        return heapSize == stale;
    }

    /** Pending (not cancelled) events. */
    public int size() {
        return heapSize - stale;
    }

    /** Deadline of the earliest event, or {@link Long#MAX_VALUE} when empty. */
    public long peekDeadlineNs() {
        dropStaleTop();
        return heapSize == 0 ? Long.MAX_VALUE : deadlineNs[0];
    }

    /** Id of the earliest event, or {@link TimerService#NO_TIMER} when empty. */
    public long peekId() {
        dropStaleTop();
        return heapSize == 0 ? TimerService.NO_TIMER : ids[0];
    }

    /** Handler of the earliest event (for tracing), or null when empty. */
    public TimerHandler peekHandler() {
        dropStaleTop();
        return heapSize == 0 ? null : handlers[(int) ids[0] - 1];
    }

    /**
     * Removes the earliest event and calls its handler with {@code nowNs}. The handler may add and
     * cancel events, including re-adding itself.
     *
     * @return the id of the event that ran, or {@link TimerService#NO_TIMER} when empty
     */
    public long fireEarliest(long nowNs) {
        dropStaleTop();
        if (heapSize == 0) {
            return TimerService.NO_TIMER;
        }
        long id = ids[0];
        removeTop();
        int slot = (int) id - 1;
        TimerHandler handler = handlers[slot];
        releaseSlot(slot);
        handler.onTimer(nowNs, id);
        return id;
    }

    private int pendingSlot(long timerId) {
        if (timerId <= 0) {
            return -1;
        }
        long slotPlusOne = timerId & 0xFFFF_FFFFL;
        if (slotPlusOne == 0 || slotPlusOne > slotsInUse) {
            return -1;
        }
        int slot = (int) (slotPlusOne - 1);
        return handlers[slot] != null && generation[slot] == (int) (timerId >>> 32) ? slot : -1;
    }

    private boolean isStale(long id) {
        int slot = (int) id - 1;
        return generation[slot] != (int) (id >>> 32) || handlers[slot] == null;
    }

    private void dropStaleTop() {
        while (stale > 0 && heapSize > 0 && isStale(ids[0])) {
            removeTop();
            stale--;
        }
    }

    private int allocateSlot() {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (slotsInUse == handlers.length) {
            int capacity = handlers.length * 2;
            handlers = Arrays.copyOf(handlers, capacity);
            generation = Arrays.copyOf(generation, capacity);
            freeSlots = Arrays.copyOf(freeSlots, capacity);
        }
        return slotsInUse++;
    }

    private void releaseSlot(int slot) {
        handlers[slot] = null;
        // Keep ids positive: the generation lives in the upper 31 bits.
        generation[slot] = (generation[slot] + 1) & 0x7FFF_FFFF;
        freeSlots[freeCount++] = slot;
    }

    private void growHeap() {
        int capacity = deadlineNs.length * 2;
        deadlineNs = Arrays.copyOf(deadlineNs, capacity);
        sequence = Arrays.copyOf(sequence, capacity);
        ids = Arrays.copyOf(ids, capacity);
    }

    /**
     * Removes the root: its hole moves down along the smaller children to a leaf (the comparisons
     * among the children only), then the last entry fills the hole and moves up. The last entry is
     * usually among the latest, so it rarely moves, and each level costs one comparison fewer than
     * sifting it down from the root.
     */
    private void removeTop() {
        int last = --heapSize;
        if (last == 0) {
            return;
        }
        long[] dl = deadlineNs;
        long[] sq = sequence;
        long[] id = ids;
        int hole = 0;
        while (true) {
            int first = (hole << 2) + 1;
            if (first >= last) {
                break;
            }
            int best = first;
            long bd = dl[first];
            int end = Math.min(first + 4, last);
            for (int c = first + 1; c < end; c++) {
                long cd = dl[c];
                if (cd < bd || (cd == bd && sq[c] < sq[best])) {
                    best = c;
                    bd = cd;
                }
            }
            dl[hole] = bd;
            sq[hole] = sq[best];
            id[hole] = id[best];
            hole = best;
        }
        siftUp(hole, dl[last], sq[last], id[last]);
    }

    /** Places (d, s, id) at {@code position} or above it. */
    private void siftUp(int position, long d, long s, long id) {
        long[] dl = deadlineNs;
        long[] sq = sequence;
        while (position > 0) {
            int parent = (position - 1) >>> 2;
            long pd = dl[parent];
            if (pd < d || (pd == d && sq[parent] < s)) {
                break;
            }
            dl[position] = pd;
            sq[position] = sq[parent];
            ids[position] = ids[parent];
            position = parent;
        }
        dl[position] = d;
        sq[position] = s;
        ids[position] = id;
    }

    /** Places (d, s, id) at {@code position} or below it, among the first {@code heapSize} entries. */
    private void siftDown(int position, long d, long s, long id) {
        long[] dl = deadlineNs;
        long[] sq = sequence;
        int n = heapSize;
        while (true) {
            int first = (position << 2) + 1;
            if (first >= n) {
                break;
            }
            int best = first;
            long bd = dl[first];
            int end = Math.min(first + 4, n);
            for (int c = first + 1; c < end; c++) {
                long cd = dl[c];
                if (cd < bd || (cd == bd && sq[c] < sq[best])) {
                    best = c;
                    bd = cd;
                }
            }
            if (d < bd || (d == bd && s < sq[best])) {
                break;
            }
            dl[position] = bd;
            sq[position] = sq[best];
            ids[position] = ids[best];
            position = best;
        }
        dl[position] = d;
        sq[position] = s;
        ids[position] = id;
    }

    /** Drops every stale entry and rebuilds the heap from the live ones. */
    private void purge() {
        int n = 0;
        for (int i = 0; i < heapSize; i++) {
            if (!isStale(ids[i])) {
                deadlineNs[n] = deadlineNs[i];
                sequence[n] = sequence[i];
                ids[n] = ids[i];
                n++;
            }
        }
        heapSize = n;
        stale = 0;
        for (int i = (n - 2) >>> 2; n > 1 && i >= 0; i--) {
            siftDown(i, deadlineNs[i], sequence[i], ids[i]);
        }
    }
}
