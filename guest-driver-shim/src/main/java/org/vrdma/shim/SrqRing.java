package org.vrdma.shim;

import static org.vrdma.shim.ControlProtocol.*;

import java.lang.invoke.VarHandle;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SharedReceiveQueue;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A shared receive queue of one application and the ring it posts receives into. The vNIC moves
 * receives from the ring into the model's queue on a doorbell, and also whenever a message finds the
 * model's queue empty, so a receive posted before a message arrived is always found. It publishes as
 * its consumer counter the receives consumed (handed to a message or refused), not the slots read:
 * the library's {@code prod - cons} is then exactly the receives outstanding, and a post beyond
 * {@code max_wr} fails there with ENOMEM. Confined to the device thread.
 */
final class SrqRing {
    final SharedReceiveQueue srq;
    private SharedRing ring;
    private int entries;
    final int stride;
    final int maxSge;
    private final RecvWorkRequest recv;
    /** Slots read from the ring. */
    private int drained;
    /** The consumer counter last published. */
    private int published;
    /** The model's queue was full (an application posting past its counter): retried later. */
    boolean stalled;
    /** Slots refused (bad SGE count, lkey of nothing): consumed without a completion. */
    long refused;

    SrqRing(final SharedReceiveQueue srq, final SharedRing ring, final int maxWr, final int maxSge) {
        this.srq = srq;
        this.ring = ring;
        this.entries = Session.pow2AtLeast(maxWr);
        this.stride = stride(maxSge);
        this.maxSge = maxSge;
        this.recv = new RecvWorkRequest(maxSge);
    }

    static int stride(final int maxSge) {
        return Session.align64(RQ_WQE_BYTES + SGE_BYTES * maxSge);
    }

    static long bytes(final int maxWr, final int maxSge) {
        return SRQ_RING_HDR + (long) Session.pow2AtLeast(maxWr) * stride(maxSge);
    }

    /**
     * Drains the ring, then arms the doorbell unless the model's queue was full. False when the
     * producer kept going for 64 rounds: the caller drains again later, letting other work run.
     */
    boolean onDoorbell() {
        for (int round = 0; round < 64; round++) {
            drain();
            if (stalled) {
                return true;
            }
            ring.setIntVolatile(DB_ARMED, 1);
            VarHandle.fullFence();
            if (ring.getIntAcquire(SRQ_PROD) == drained) {
                return true;
            }
            ring.setIntVolatile(DB_ARMED, 0);
        }
        return false;
    }

    /** A message found the model's queue empty: move what the application posted meanwhile. */
    void onEmpty() {
        if (!stalled) {
            drain();
        }
    }

    void drain() {
        final int prod = ring.getIntAcquire(SRQ_PROD);
        if (prod - drained > entries || prod - drained < 0) {
            return; // a producer counter the application corrupted: nothing to trust
        }
        while (drained != prod) {
            final long at = SRQ_RING_HDR + (long) (drained & (entries - 1)) * stride;
            final int numSge = ring.getInt(at + 8);
            if (numSge < 0 || numSge > maxSge) {
                refused++;
            } else {
                recv.reset();
                recv.wrId = ring.getLong(at);
                for (int i = 0; i < numSge; i++) {
                    final long s = at + RQ_WQE_BYTES + (long) i * SGE_BYTES;
                    recv.addSge(ring.getLong(s), ring.getInt(s + 8), ring.getInt(s + 12));
                }
                try {
                    srq.postRecv(recv);
                } catch (final VerbsException e) {
                    if (e.errno() == Errno.ENOMEM) {
                        stalled = true;
                        break;
                    }
                    refused++;
                }
            }
            drained++;
        }
        publishConsumed();
    }

    /** Publishes the receives consumed so far; cheap when nothing changed. */
    void publishConsumed() {
        final int consumed = drained - srq.size();
        if (consumed != published) {
            published = consumed;
            ring.setIntRelease(SRQ_CONS, consumed);
        }
    }

    /** Slots of the current ring. */
    int entries() {
        return entries;
    }

    /**
     * Continues on {@code next}, a ring for {@code maxWr} receives whose producer counter the library
     * set to this ring's (everything here was drained): counters run on, the old ring is unmapped.
     */
    void replaceRing(final SharedRing next, final int maxWr) {
        final SharedRing old = ring;
        ring = next;
        entries = Session.pow2AtLeast(maxWr);
        stalled = false;
        published = drained - srq.size() - 1; // force the consumer counter into the new ring
        publishConsumed();
        old.close();
    }

    void close() {
        ring.close();
    }
}
