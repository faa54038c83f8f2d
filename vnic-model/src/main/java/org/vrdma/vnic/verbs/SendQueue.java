package org.vrdma.vnic.verbs;

/**
 * The ring of posted send work requests. Sequence numbers grow forever; {@link #head} is the oldest
 * WQE not yet completed and {@link #tail} the next free slot. A slot's WQE is made the first time
 * the slot is reached: a QP that posts few requests (a short flow, or a responder that posts none)
 * never pays for the rest of its ring.
 */
final class SendQueue {
    private final SendWqe[] ring;
    private final int maxSge;
    private final int maxInline;
    long head;
    long tail;

    SendQueue(final int capacity, final int maxSge, final int maxInline) {
        this.ring = new SendWqe[capacity];
        this.maxSge = maxSge;
        this.maxInline = maxInline;
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
        final int i = (int) (seq % ring.length);
        final SendWqe w = ring[i];
        return w != null ? w : (ring[i] = new SendWqe(maxSge, maxInline));
    }
}
