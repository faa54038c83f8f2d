package org.vrdma.runtime;

import java.util.Arrays;

/**
 * The pending timers of both drivers (the virtual-time scheduler and the real-time event-loop timer
 * service), ordered by deadline, then by the order they were added. Events due within {@link
 * #CALENDAR_NS} of the last one run wait in a calendar of one-nanosecond buckets: adding appends to
 * the bucket's list (the later-added event is always the later one in the order), and the next
 * event is the head of the first non-empty bucket, found in a bitmap; a virtual-time network's
 * events (packets arriving after a link's delay, pacing timers) are nearly all this close. Later
 * events (retransmission timeouts, far arrivals) and any added before the last one run wait in a
 * 4-ary min-heap whose entries sit in two primitive arrays in heap order, the deadline and a key of
 * the sequence number (upper 40 bits) and the handler's slot (lower 24 bits), so a sift compares
 * and moves two neighbouring longs. The earlier of the two heads runs first. Nothing is allocated
 * per event once the arrays have grown to the working size.
 *
 * <p>Cancelling is lazy: the id dies at once (the slot's handler is cleared and its generation
 * bumped), and the stale entry is dropped when it reaches the front (or, in the heap, when stale
 * entries outnumber live ones, by one rebuild); only then is its slot reused, so an entry's slot
 * always tells whether it is stale. The order of the live events is a total order on (deadline,
 * sequence), so neither where an event waits nor the cancellations change which event runs next:
 * the same inputs always give the same sequence of events.
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

    private static final int CALENDAR_BITS = 12;
    /** Events due less than this long after the last one run wait in the calendar. */
    static final int CALENDAR_NS = 1 << CALENDAR_BITS;

    private static final int CALENDAR_MASK = CALENDAR_NS - 1;
    private static final int NONE = -1;

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

    // Calendar: bucket d & CALENDAR_MASK holds, in the order they were added, the events due at d,
    // for d in [cursorNs, cursorNs + CALENDAR_NS); each slot's deadline, key and successor in its bucket.
    private final int[] bucketHead = new int[CALENDAR_NS];
    private final int[] bucketTail = new int[CALENDAR_NS];
    private final long[] occupied = new long[CALENDAR_NS / 64];
    private long cursorNs;
    private long[] slotDeadlineNs;
    private long[] slotKey;
    private int[] nextInBucket;
    private boolean[] inCalendar;
    private int calendarEntries;
    private int calendarStale;

    /**
     * The earliest live slot as last found, or NONE when not known: a peek followed by a fire (the
     * scheduler's loop) finds it once. Any add or cancel forgets it.
     */
    private int known = NONE;

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
        slotDeadlineNs = new long[capacity];
        slotKey = new long[capacity];
        nextInBucket = new int[capacity];
        inCalendar = new boolean[capacity];
        Arrays.fill(bucketHead, NONE);
    }

    /** Adds an event and returns its id (always positive). */
    public long add(long deadline, TimerHandler handler) {
        if (handler == null) {
            throw new NullPointerException("handler");
        }
        known = NONE;
        int slot = allocateSlot();
        handlers[slot] = handler;
        long key = nextSequence++ << SLOT_BITS | slot;
        if (deadline >= cursorNs && (deadline - cursorNs) >>> CALENDAR_BITS == 0) {
            // Appending keeps the bucket in key order: this key is the largest so far.
            int b = (int) deadline & CALENDAR_MASK;
            slotDeadlineNs[slot] = deadline;
            slotKey[slot] = key;
            nextInBucket[slot] = NONE;
            inCalendar[slot] = true;
            if (bucketHead[b] == NONE) {
                bucketHead[b] = slot;
                occupied[b >>> 6] |= 1L << b;
            } else {
                nextInBucket[bucketTail[b]] = slot;
            }
            bucketTail[b] = slot;
            calendarEntries++;
            return idOf(slot);
        }
        inCalendar[slot] = false;
        if (heapSize == deadlineNs.length) {
            growHeap();
        }
        siftUp(heapSize++, deadline, key);
        return idOf(slot);
    }

    /** Removes a pending event; false when the id is not pending. */
    public boolean cancel(long timerId) {
        int slot = pendingSlot(timerId);
        if (slot < 0) {
            return false;
        }
        known = NONE;
        kill(slot);
        if (inCalendar[slot]) {
            calendarStale++;
            return true;
        }
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
        return size() == 0;
    }

    /** Pending (not cancelled) events. */
    public int size() {
        return heapSize - stale + calendarEntries - calendarStale;
    }

    /** Deadline of the earliest event, or {@link Long#MAX_VALUE} when empty. */
    public long peekDeadlineNs() {
        int slot = earliestSlot();
        return slot == NONE ? Long.MAX_VALUE : inCalendar[slot] ? slotDeadlineNs[slot] : deadlineNs[0];
    }

    /** Id of the earliest event, or {@link TimerService#NO_TIMER} when empty. */
    public long peekId() {
        int slot = earliestSlot();
        return slot == NONE ? TimerService.NO_TIMER : idOf(slot);
    }

    /** Handler of the earliest event (for tracing), or null when empty. */
    public TimerHandler peekHandler() {
        int slot = earliestSlot();
        return slot == NONE ? null : handlers[slot];
    }

    /**
     * The slot of the earliest live event (the head of the calendar's first non-empty bucket or the
     * heap's root, whichever is earlier), dropping stale entries in front; NONE when empty.
     */
    private int earliestSlot() {
        if (known != NONE) {
            return known;
        }
        dropStaleTop();
        int c = calendarEntries == 0 ? NONE : calendarHead();
        if (heapSize == 0) {
            return known = c;
        }
        if (c == NONE) {
            return known = slotOf(keys[0]);
        }
        long cd = slotDeadlineNs[c];
        long hd = deadlineNs[0];
        return known = cd < hd || (cd == hd && slotKey[c] < keys[0]) ? c : slotOf(keys[0]);
    }

    /** The live head of the first non-empty bucket from the cursor on (stale heads dropped), or NONE. */
    private int calendarHead() {
        int start = (int) cursorNs & CALENDAR_MASK;
        int word = start >>> 6;
        long bits = occupied[word] & (-1L << start);
        for (int scanned = 0; ; ) {
            while (bits != 0) {
                int b = (word << 6) | Long.numberOfTrailingZeros(bits);
                int slot = bucketHead[b];
                while (slot != NONE && handlers[slot] == null) {
                    // Cancelled: drop it, reuse its slot.
                    int next = nextInBucket[slot];
                    freeSlots[freeCount++] = slot;
                    calendarEntries--;
                    calendarStale--;
                    slot = next;
                }
                if (slot != NONE) {
                    bucketHead[b] = slot;
                    return slot;
                }
                bucketHead[b] = NONE;
                occupied[word] &= ~(1L << b);
                bits &= bits - 1;
            }
            if (++scanned > occupied.length || calendarEntries == 0) {
                return NONE;
            }
            word = (word + 1) & (occupied.length - 1);
            bits = occupied[word];
        }
    }

    /** Takes the calendar's head {@code slot} (the earliest event) off its bucket. */
    private void removeCalendarHead(int slot) {
        int b = (int) slotDeadlineNs[slot] & CALENDAR_MASK;
        int next = nextInBucket[slot];
        bucketHead[b] = next;
        if (next == NONE) {
            occupied[b >>> 6] &= ~(1L << b);
        }
        calendarEntries--;
    }

    /**
     * Removes the earliest event and calls its handler with {@code nowNs}. The handler may add and
     * cancel events, including re-adding itself.
     *
     * @return the id of the event that ran, or {@link TimerService#NO_TIMER} when empty
     */
    public long fireEarliest(long nowNs) {
        int slot = earliestSlot();
        if (slot == NONE) {
            return TimerService.NO_TIMER;
        }
        known = NONE;
        long deadline;
        if (inCalendar[slot]) {
            deadline = slotDeadlineNs[slot];
            removeCalendarHead(slot);
        } else {
            deadline = deadlineNs[0];
            removeTop();
        }
        if (deadline > cursorNs) {
            // Nothing live is due earlier now: the calendar's window starts here.
            cursorNs = deadline;
        }
        long id = idOf(slot);
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
            slotDeadlineNs = Arrays.copyOf(slotDeadlineNs, capacity);
            slotKey = Arrays.copyOf(slotKey, capacity);
            nextInBucket = Arrays.copyOf(nextInBucket, capacity);
            inCalendar = Arrays.copyOf(inCalendar, capacity);
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
            int best = smallestChild(hole, last);
            if (best < 0) {
                break;
            }
            dl[hole] = dl[best];
            ks[hole] = ks[best];
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
            int best = smallestChild(position, n);
            if (best < 0) {
                break;
            }
            long bd = dl[best];
            long bk = ks[best];
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

    /** The earliest of {@code parent}'s (up to four) children among the first {@code n} entries; -1 if none. */
    private int smallestChild(int parent, int n) {
        long[] dl = deadlineNs;
        long[] ks = keys;
        int first = (parent << 2) + 1;
        if (first >= n) {
            return -1;
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
        return best;
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
