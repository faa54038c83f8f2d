package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.lang.invoke.VarHandle;
import org.vrdma.shim.SharedRing;
import org.vrdma.vnic.verbs.Errno;

/**
 * A receive queue in a ring shared with a vNIC process: a QP's own receive queue or a shared
 * receive queue, which have the same slot layout ({@code struct vr_rq_wqe} and its SGEs) and differ
 * only in where the slots and the two counters sit. Posting writes the next slot, publishes the
 * producer counter with a release store and rings the doorbell only if the vNIC armed it before it
 * went to sleep. One thread at a time posts.
 */
final class AttachedRecvQueue {
    private final SharedRing ring;
    private final long slotsAt;
    private final int entries;
    private final int stride;
    /** Receives that may be outstanding: the slots of a QP, {@code max_wr} of an SRQ. */
    private final int capacity;

    private final long prodAt;
    private final long consAt;
    private final String what;
    private int prod;

    AttachedRecvQueue(
            SharedRing ring,
            long slotsAt,
            int entries,
            int stride,
            int capacity,
            long prodAt,
            long consAt,
            String what) {
        this.ring = ring;
        this.slotsAt = slotsAt;
        this.entries = entries;
        this.stride = stride;
        this.capacity = capacity;
        this.prodAt = prodAt;
        this.consAt = consAt;
        this.what = what;
    }

    /** Posting thread: {@code wr} was validated by the caller; ENOMEM when {@code capacity} are outstanding. */
    void post(IbvContext ctx, IbvRecvWr wr) {
        int cons = ring.getIntAcquire(consAt);
        if (prod - cons >= capacity) {
            throw new IbvNoMemoryException(Errno.ENOMEM, what + " full (" + capacity + ")");
        }
        long at = slotsAt + (long) (prod & (entries - 1)) * stride;
        ring.putLong(at, wr.wrId);
        ring.putInt(at + 8, wr.numSge());
        ring.putInt(at + 12, 0);
        for (int i = 0; i < wr.numSge(); i++) {
            putSge(ring, at + RQ_WQE_BYTES + (long) i * SGE_BYTES, wr, i);
        }
        ring.setIntRelease(prodAt, ++prod);
        doorbell(ctx, ring);
    }

    /**
     * The same queue on {@code ring} (this one or a new one whose counters the caller set to this
     * one's) with room for {@code capacity} receives, continuing at this producer counter.
     */
    AttachedRecvQueue resized(SharedRing next, int nextEntries, int nextCapacity) {
        AttachedRecvQueue q =
                new AttachedRecvQueue(next, slotsAt, nextEntries, stride, nextCapacity, prodAt, consAt, what);
        q.prod = prod;
        return q;
    }

    /** The producer counter (receives posted so far). */
    int prod() {
        return prod;
    }

    /** Slots of the ring. */
    int entries() {
        return entries;
    }

    /** Receives posted the vNIC has not consumed yet. */
    int outstanding() {
        return prod - ring.getIntAcquire(consAt);
    }

    static void putSge(SharedRing ring, long at, SgeWorkRequest<?> wr, int i) {
        ring.putLong(at, wr.sgeAddr(i));
        ring.putInt(at + 8, wr.sgeLength(i));
        ring.putInt(at + 12, wr.sgeLkey(i));
    }

    /** After publishing: wake the vNIC only if it armed the ring's doorbell before sleeping. */
    static void doorbell(IbvContext ctx, SharedRing ring) {
        VarHandle.fullFence();
        if (ring.getInt(DB_ARMED) != 0 && ring.getAndSetInt(DB_ARMED, 0) != 0) {
            ctx.attached.ringDoorbell();
        }
    }
}
