package org.vrdma.vnic.verbs;

/** A FIFO of posted receives: a queue pair's own or the one inside a shared receive queue. */
final class ReceiveQueue {
    private RecvWqe[] ring;
    private long head;
    private long tail;

    ReceiveQueue(final int capacity, final int maxSge) {
        ring = new RecvWqe[capacity];
        for (int i = 0; i < capacity; i++) {
            ring[i] = new RecvWqe(maxSge);
        }
    }

    int capacity() {
        return ring.length;
    }

    int size() {
        return (int) (tail - head);
    }

    /**
     * Changes the capacity to {@code capacity}, keeping the receives posted in order; false if more
     * than that are posted.
     */
    boolean resize(final int capacity) {
        final int n = size();
        if (capacity < n) {
            return false;
        }
        final int maxSge = maxSge();
        final RecvWqe[] next = new RecvWqe[capacity];
        for (int i = 0; i < n; i++) {
            next[i] = ring[(int) ((head + i) % ring.length)];
        }
        for (int i = n; i < capacity; i++) {
            next[i] = new RecvWqe(maxSge);
        }
        ring = next;
        head = 0;
        tail = n;
        return true;
    }

    int maxSge() {
        return ring[0].mr.length;
    }

    void post(final RecvWorkRequest wr, final ProtectionDomain pd, final Device device) {
        if (wr.numSge() > maxSge()) {
            throw new VerbsException(Errno.EINVAL, "num_sge " + wr.numSge() + " > max " + maxSge());
        }
        if (tail - head == ring.length) {
            throw new VerbsException(Errno.ENOMEM, "receive queue full");
        }
        for (int i = 0; i < wr.numSge(); i++) {
            if (wr.sgeLength(i) < 0) {
                throw new VerbsException(Errno.EINVAL, "negative sge length");
            }
        }
        ring[(int) (tail % ring.length)].resolve(wr, pd, device);
        tail++;
    }

    /** Moves the oldest receive into {@code dst}; false if the queue is empty. */
    boolean takeInto(final RecvWqe dst) {
        if (head == tail) {
            return false;
        }
        dst.copyFrom(ring[(int) (head % ring.length)]);
        head++;
        return true;
    }

    /** Completes every posted receive with WR_FLUSH_ERR on {@code cq}. */
    void flush(final CompletionQueue cq, final int qpNum) {
        while (head != tail) {
            final RecvWqe w = ring[(int) (head % ring.length)];
            head++;
            final WorkCompletion wc = cq.claim();
            if (wc != null) {
                wc.wrId = w.wrId;
                wc.status = WcStatus.WR_FLUSH_ERR;
                wc.opcode = WcOpcode.RECV;
                wc.qpNum = qpNum;
                cq.publish(false);
            }
        }
    }

    /** Drops everything without completions (transition to RESET). */
    void clear() {
        head = tail;
    }
}
