package org.vrdma.vnic.verbs;

/**
 * The ring of posted send work requests. Sequence numbers grow forever; {@link #head} is the oldest
 * WQE not yet completed and {@link #tail} the next free slot.
 */
final class SendQueue {
    private final SendWqe[] ring;
    long head;
    long tail;

    SendQueue(final int capacity, final int maxSge, final int maxInline) {
        ring = new SendWqe[capacity];
        for (int i = 0; i < capacity; i++) {
            ring[i] = new SendWqe(maxSge, maxInline);
        }
    }

    int capacity() {
        return ring.length;
    }

    boolean isFull() {
        return tail - head == ring.length;
    }

    boolean isEmpty() {
        return head == tail;
    }

    SendWqe get(final long seq) {
        return ring[(int) (seq % ring.length)];
    }
}
