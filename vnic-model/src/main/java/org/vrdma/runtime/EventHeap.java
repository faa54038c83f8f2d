package org.vrdma.runtime;

import java.util.Arrays;

/**
 * The pending timers of both drivers (the virtual-time scheduler and the real-time event-loop timer
 * service), ordered by deadline, then by the order they were added: a 4-ary min-heap whose entries
 * sit in two primitive arrays in heap order, the deadline and a key of the sequence number (upper
 * 40 bits) and the handler's slot (lower 24 bits), so a sift compares and moves two neighbouring
 * longs per entry instead of chasing slot indices, and nothing is allocated per event once the
 * arrays have grown to the working size.
 *
 * <p>Cancelling is lazy: the id dies at once (the slot's handler is cleared and its generation
 * bumped), and the stale heap entry is dropped when it reaches the top (or when stale entries
 * outnumber live ones, by one rebuild); only then is its slot reused, so an entry's slot always
 * tells whether it is stale. The order of the live events is a total order on (deadline, sequence), so
 * neither the heap's shape nor the cancellations change which event runs next: the same inputs
 * always give the same sequence of events.
 *
 * <p>A timer id packs a slot number with that slot's generation, so cancelling an id whose event
 * already ran (and whose slot was reused) is a harmless no-op. Not thread-safe.
 */
public final class EventHeap {
    private static final int INITIAL_CAPACITY = 64;
    private static final int MIN_PURGE = 1024;
    private static final int SLOT_BITS = 24;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    /** Slots a heap can have: the key holds a slot in its lower 24 bits. */
    static final int MAX_SLOTS = 1 << SLOT_BITS;

    // Heap order: entry i has children 4i+1 .. 4i+4. key = sequence << 24 | slot.
    private long[] deadlineNs;
    private long[] keys;
    private int heapSize;
    private int stale;
    private long nextSequence;

    // Per slot: the handler of a pending event (null when free or cancelled) and the slot's current
    // generation. A cancelled slot is reused only once its heap entry is gone.
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
        keys = new long[capacity];
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
        if (heapSize == deadlineNs.length) {
            growHeap();
        }
        siftUp(heapSize++, deadline, nextSequence++ << SLOT_BITS | slot);
        return idOf(slot);
    }

    /** Removes a pending event; false when the id is not pending. */
    public boolean cancel(long timerId) {
        int slot = pendingSlot(timerId);
        if (slot < 0) {
            return false;
        }
        kill(slot);
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
        return heapSize == 0 ? TimerService.NO_TIMER : idOf(slotOf(keys[0]));
    }

    /** Handler of the earliest event (for tracing), or null when empty. */
    public TimerHandler peekHandler() {
        dropStaleTop();
        return heapSize == 0 ? null : handlers[slotOf(keys[0])];
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
        int slot = slotOf(keys[0]);
        long id = idOf(slot);
        removeTop();
        TimerHandler handler = handlers[slot];
        kill(slot);
        freeSlots[freeCount++] = slot;
        handler.onTimer(nowNs, id);
        return id;
    }

    private static int slotOf(long key) {
        return (int) (key & SLOT_MASK);
    }

    private long idOf(int slot) {
        return ((long) generation[slot] << 32) | (slot + 1L);
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

    private boolean isStale(long key) {
        return handlers[slotOf(key)] == null;
    }

    private void dropStaleTop() {
        while (stale > 0 && heapSize > 0 && isStale(keys[0])) {
            freeSlots[freeCount++] = slotOf(keys[0]);
            removeTop();
            stale--;
        }
    }

    private int allocateSlot() {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (slotsInUse == handlers.length) {
            if (slotsInUse == MAX_SLOTS) {
                throw new IllegalStateException("more than " + MAX_SLOTS + " pending timers");
            }
            int capacity = Math.min(MAX_SLOTS, handlers.length * 2);
            handlers = Arrays.copyOf(handlers, capacity);
            generation = Arrays.copyOf(generation, capacity);
            freeSlots = Arrays.copyOf(freeSlots, capacity);
        }
        return slotsInUse++;
    }

    /** Ends the slot's id: no handler, a new generation. The caller frees the slot when its entry is gone. */
    private void kill(int slot) {
        handlers[slot] = null;
        // Keep ids positive: the generation lives in the upper 31 bits.
        generation[slot] = (generation[slot] + 1) & 0x7FFF_FFFF;
    }

    private void growHeap() {
        int capacity = deadlineNs.length * 2;
        deadlineNs = Arrays.copyOf(deadlineNs, capacity);
        keys = Arrays.copyOf(keys, capacity);
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
        long[] ks = keys;
        int hole = 0;
        while (true) {
            int first = (hole << 2) + 1;
            if (first >= last) {
                break;
            }
            int best = first;
            long bd = dl[first];
            long bk = ks[first];
            int end = Math.min(first + 4, last);
            for (int c = first + 1; c < end; c++) {
                long cd = dl[c];
                if (cd < bd || (cd == bd && ks[c] < bk)) {
                    best = c;
                    bd = cd;
                    bk = ks[c];
                }
            }
            dl[hole] = bd;
            ks[hole] = bk;
            hole = best;
        }
        siftUp(hole, dl[last], ks[last]);
    }

    /** Places (d, k) at {@code position} or above it. */
    private void siftUp(int position, long d, long k) {
        long[] dl = deadlineNs;
        long[] ks = keys;
        while (position > 0) {
            int parent = (position - 1) >>> 2;
            long pd = dl[parent];
            if (pd < d || (pd == d && ks[parent] < k)) {
                break;
            }
            dl[position] = pd;
            ks[position] = ks[parent];
            position = parent;
        }
        dl[position] = d;
        ks[position] = k;
    }

    /** Places (d, k) at {@code position} or below it, among the first {@code heapSize} entries. */
    private void siftDown(int position, long d, long k) {
        long[] dl = deadlineNs;
        long[] ks = keys;
        int n = heapSize;
        while (true) {
            int first = (position << 2) + 1;
            if (first >= n) {
                break;
            }
            int best = first;
            long bd = dl[first];
            long bk = ks[first];
            int end = Math.min(first + 4, n);
            for (int c = first + 1; c < end; c++) {
                long cd = dl[c];
                if (cd < bd || (cd == bd && ks[c] < bk)) {
                    best = c;
                    bd = cd;
                    bk = ks[c];
                }
            }
            if (d < bd || (d == bd && k < bk)) {
                break;
            }
            dl[position] = bd;
            ks[position] = bk;
            position = best;
        }
        dl[position] = d;
        ks[position] = k;
    }

    /** Drops every stale entry (freeing its slot) and rebuilds the heap from the live ones. */
    private void purge() {
        int n = 0;
        for (int i = 0; i < heapSize; i++) {
            if (isStale(keys[i])) {
                freeSlots[freeCount++] = slotOf(keys[i]);
            } else {
                deadlineNs[n] = deadlineNs[i];
                keys[n] = keys[i];
                n++;
            }
        }
        heapSize = n;
        stale = 0;
        for (int i = (n - 2) >>> 2; n > 1 && i >= 0; i--) {
            siftDown(i, deadlineNs[i], keys[i]);
        }
    }
}
