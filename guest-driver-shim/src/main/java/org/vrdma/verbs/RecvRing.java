package org.vrdma.verbs;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.vrdma.vnic.verbs.RecvWorkRequest;

/**
 * Posted receives on their way from the application to the device: a single-producer/single-consumer
 * ring of copies, published by the posting thread and drained on the device's loop. A slot is free
 * again once the receive it carried has completed (every receive completes once, success or flush).
 */
final class RecvRing {
    private final long[] wrIds;
    private final long[][] addrs;
    private final int[][] lengths;
    private final int[][] lkeys;
    private final int[] numSge;
    private final int capacity;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong retired = new AtomicLong();
    final AtomicBoolean scheduled = new AtomicBoolean();
    // Confined to the loop.
    private long loopHead;
    private final RecvWorkRequest modelWr;

    RecvRing(int capacity, int maxSge) {
        this.capacity = capacity;
        this.wrIds = new long[capacity];
        this.addrs = new long[capacity][maxSge];
        this.lengths = new int[capacity][maxSge];
        this.lkeys = new int[capacity][maxSge];
        this.numSge = new int[capacity];
        this.modelWr = new RecvWorkRequest(Math.max(1, maxSge));
    }

    /** On the posting thread: validates and copies {@code wr}; false when the queue is full. */
    boolean offer(IbvRecvWr wr, int maxSge) {
        check(wr, maxSge);
        long t = tail.getPlain();
        if (t - retired.get() >= capacity) {
            return false;
        }
        int s = (int) (t % capacity);
        wrIds[s] = wr.wrId;
        numSge[s] = wr.numSge();
        for (int i = 0; i < wr.numSge(); i++) {
            addrs[s][i] = wr.sgeAddr(i);
            lengths[s][i] = wr.sgeLength(i);
            lkeys[s][i] = wr.sgeLkey(i);
        }
        // A volatile store: ordered before the posting thread reads the scheduled flag.
        tail.set(t + 1);
        return true;
    }

    /** On the loop: hands every published receive to {@code sink}. */
    void drain(Consumer<RecvWorkRequest> sink) {
        scheduled.set(false);
        long t = tail.get();
        while (loopHead < t) {
            int s = (int) (loopHead % capacity);
            modelWr.reset();
            modelWr.wrId = wrIds[s];
            for (int i = 0; i < numSge[s]; i++) {
                modelWr.addSge(addrs[s][i], lengths[s][i], lkeys[s][i]);
            }
            loopHead++;
            sink.accept(modelWr);
        }
    }

    /**
     * On the loop, after a {@link #drain}: the same queue with room for {@code newCapacity}
     * receives; every slot was drained, so the counters simply run on in the new slots.
     */
    RecvRing resized(int newCapacity, int maxSge) {
        RecvRing r = new RecvRing(newCapacity, maxSge);
        r.tail.set(tail.get());
        r.retired.set(retired.get());
        r.loopHead = loopHead;
        return r;
    }

    /** On the loop: one receive completed. */
    void retireOne() {
        retired.set(retired.get() + 1);
    }

    /** On the loop, after a drain: everything posted is gone (RESET). */
    void retireAll() {
        retired.set(tail.get());
    }

    /** Receives posted and not completed. */
    long outstanding() {
        return tail.get() - retired.get();
    }

    /** The checks of a receive every queue makes when it is posted (embedded or attached): EINVAL. */
    static void check(IbvRecvWr wr, int maxSge) {
        if (wr == null) {
            throw new IbvInvalidArgumentException("work request missing");
        }
        if (wr.numSge() > maxSge) {
            throw new IbvInvalidArgumentException("num_sge " + wr.numSge() + " > max_recv_sge " + maxSge);
        }
        for (int i = 0; i < wr.numSge(); i++) {
            if (wr.sgeLength(i) < 0) {
                throw new IbvInvalidArgumentException("negative sge length");
            }
        }
    }
}
