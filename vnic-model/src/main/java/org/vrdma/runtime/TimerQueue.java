package org.vrdma.runtime;

import java.util.Arrays;

/**
 * Pending timers ordered by deadline, then by the order they were added: an indexed binary heap
 * over parallel primitive arrays, so adding, cancelling and expiring allocate nothing once the
 * arrays have grown to the working size. Millions of pending timers cost about 40 bytes each.
 *
 * <p>A timer id packs a slot number with that slot's generation, so cancelling an id whose timer
 * already expired (and whose slot was reused) is a harmless no-op. Not thread-safe: each driver
 * confines its queue to one thread.
 */
public final class TimerQueue {
    private static final int INITIAL_CAPACITY = 64;
    private static final int FREE = -1;

    // Per slot.
    private long[] deadlineNs;
    private long[] sequence;
    private TimerHandler[] handlers;
    private int[] generation;
    private int[] heapPosition;

    // Heap of slot numbers, and a stack of free slots.
    private int[] heap;
    private int size;
    private int[] freeSlots;
    private int freeCount;
    private int slotsInUse;
    private long nextSequence;

    public TimerQueue() {
        this(INITIAL_CAPACITY);
    }

    public TimerQueue(int initialCapacity) {
        int capacity = Math.max(1, initialCapacity);
        deadlineNs = new long[capacity];
        sequence = new long[capacity];
        handlers = new TimerHandler[capacity];
        generation = new int[capacity];
        heapPosition = new int[capacity];
        Arrays.fill(heapPosition, FREE);
        heap = new int[capacity];
        freeSlots = new int[capacity];
    }

    /** Adds a timer and returns its id (always positive). */
    public long add(long deadlineNs, TimerHandler handler) {
        if (handler == null) {
            throw new NullPointerException("handler");
        }
        int slot = allocateSlot();
        this.deadlineNs[slot] = deadlineNs;
        sequence[slot] = nextSequence++;
        handlers[slot] = handler;
        heap[size] = slot;
        heapPosition[slot] = size;
        siftUp(size++);
        return idOf(slot);
    }

    /** Removes a pending timer; false when the id is not pending. */
    public boolean cancel(long timerId) {
        int slot = pendingSlot(timerId);
        if (slot < 0) {
            return false;
        }
        removeAt(heapPosition[slot]);
        return true;
    }

    /** Whether the timer with this id is still pending. */
    public boolean isPending(long timerId) {
        return pendingSlot(timerId) >= 0;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public int size() {
        return size;
    }

    /** Deadline of the earliest timer, or {@link Long#MAX_VALUE} when empty. */
    public long peekDeadlineNs() {
        return size == 0 ? Long.MAX_VALUE : deadlineNs[heap[0]];
    }

    /** Id of the earliest timer, or {@link TimerService#NO_TIMER} when empty. */
    public long peekId() {
        return size == 0 ? TimerService.NO_TIMER : idOf(heap[0]);
    }

    /**
     * Removes the earliest timer and calls its handler with {@code nowNs}. The handler may add and
     * cancel timers, including re-adding itself.
     *
     * @return the id of the timer that fired, or {@link TimerService#NO_TIMER} when empty
     */
    public long fireEarliest(long nowNs) {
        if (size == 0) {
            return TimerService.NO_TIMER;
        }
        int slot = heap[0];
        long id = idOf(slot);
        TimerHandler handler = handlers[slot];
        removeAt(0);
        handler.onTimer(nowNs, id);
        return id;
    }

    /** Handler of the earliest timer (for tracing), or null when empty. */
    public TimerHandler peekHandler() {
        return size == 0 ? null : handlers[heap[0]];
    }

    private long idOf(int slot) {
        return ((long) generation[slot] << 32) | (slot + 1L);
    }

    private int pendingSlot(long timerId) {
        if (timerId <= 0) {
            return -1;
        }
        long slotPlusOne = timerId & 0xFFFF_FFFFL;
        int gen = (int) (timerId >>> 32);
        if (slotPlusOne == 0 || slotPlusOne > slotsInUse) {
            return -1;
        }
        int slot = (int) (slotPlusOne - 1);
        return heapPosition[slot] != FREE && generation[slot] == gen ? slot : -1;
    }

    private int allocateSlot() {
        if (freeCount > 0) {
            return freeSlots[--freeCount];
        }
        if (slotsInUse == deadlineNs.length) {
            grow();
        }
        return slotsInUse++;
    }

    private void grow() {
        int capacity = deadlineNs.length * 2;
        deadlineNs = Arrays.copyOf(deadlineNs, capacity);
        sequence = Arrays.copyOf(sequence, capacity);
        handlers = Arrays.copyOf(handlers, capacity);
        generation = Arrays.copyOf(generation, capacity);
        int old = heapPosition.length;
        heapPosition = Arrays.copyOf(heapPosition, capacity);
        Arrays.fill(heapPosition, old, capacity, FREE);
        heap = Arrays.copyOf(heap, capacity);
        freeSlots = Arrays.copyOf(freeSlots, capacity);
    }

    private void removeAt(int position) {
        int slot = heap[position];
        int last = heap[--size];
        releaseSlot(slot);
        if (position == size) {
            return;
        }
        heap[position] = last;
        heapPosition[last] = position;
        if (position > 0 && before(last, heap[(position - 1) >>> 1])) {
            siftUp(position);
        } else {
            siftDown(position);
        }
    }

    private void releaseSlot(int slot) {
        heapPosition[slot] = FREE;
        handlers[slot] = null;
        // Keep ids positive: the generation lives in the upper 31 bits.
        generation[slot] = (generation[slot] + 1) & 0x7FFF_FFFF;
        freeSlots[freeCount++] = slot;
    }

    private boolean before(int slotA, int slotB) {
        long a = deadlineNs[slotA];
        long b = deadlineNs[slotB];
        return a < b || (a == b && sequence[slotA] < sequence[slotB]);
    }

    private void siftUp(int position) {
        int slot = heap[position];
        while (position > 0) {
            int parent = (position - 1) >>> 1;
            int parentSlot = heap[parent];
            if (!before(slot, parentSlot)) {
                break;
            }
            heap[position] = parentSlot;
            heapPosition[parentSlot] = position;
            position = parent;
        }
        heap[position] = slot;
        heapPosition[slot] = position;
    }

    private void siftDown(int position) {
        int slot = heap[position];
        int half = size >>> 1;
        while (position < half) {
            int child = 2 * position + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], slot)) {
                break;
            }
            heap[position] = heap[child];
            heapPosition[heap[child]] = position;
            position = child;
        }
        heap[position] = slot;
        heapPosition[slot] = position;
    }
}
