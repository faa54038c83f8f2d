package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.nio.ByteBuffer;
import org.vrdma.shim.ControlProtocol.SrqRingLayout;
import org.vrdma.shim.SharedRing;
import org.vrdma.shim.VnicClient;

/**
 * A shared receive queue in a vNIC process: a sealed memfd ring this JVM creates and the vNIC maps,
 * laid out as the native library's ({@code vrdma_proto.h}: 512-byte header, then the slots of
 * {@code struct vr_rq_wqe} and SGEs). The vNIC publishes as its consumer counter the receives it has
 * consumed, so {@code prod - cons} is exactly the receives outstanding and a post beyond {@code
 * max_wr} fails here with ENOMEM, as on an embedded host.
 */
final class AttachedSrq {
    final int handle;
    private SharedRing ring;
    private AttachedRecvQueue queue;
    private final int maxSge;

    private AttachedSrq(int handle, SharedRing ring, AttachedRecvQueue queue, int maxSge) {
        this.handle = handle;
        this.ring = ring;
        this.queue = queue;
        this.maxSge = maxSge;
    }

    /** CREATE_SRQ with its ring; {@code granted[0..1]} get the {@code max_wr} and {@code max_sge} granted. */
    static AttachedSrq create(IbvContext ctx, IbvPd pd, int maxWr, int maxSge, int srqLimit, int[] granted) {
        var a = ctx.queryDevice();
        if (maxWr < 1
                || maxWr > a.maxSrqWr()
                || maxSge < 1
                || maxSge > a.maxSrqSge()
                || srqLimit < 0
                || srqLimit > maxWr) {
            throw new IbvInvalidArgumentException("shared receive queue of " + maxWr + " x " + maxSge + " (limit "
                    + srqLimit + ") beyond the device's limits");
        }
        ctx.attached.openDoorbell();
        SrqRingLayout layout = SrqRingLayout.of(maxWr, maxSge);
        SharedRing ring = AttachedCq.ring("vrdma-srq", layout.bytes());
        ByteBuffer req = VnicClient.body(24);
        req.putInt(pd.handle).putInt(maxWr).putInt(maxSge).putInt(srqLimit);
        req.putInt(ring.fd()).putInt((int) ring.bytes());
        ByteBuffer r = ctx.attached.callWithRing(CREATE_SRQ, req, ring);
        int handle = r.getInt();
        granted[0] = r.getInt();
        granted[1] = r.getInt();
        AttachedRecvQueue q = new AttachedRecvQueue(
                ring,
                SRQ_RING_HDR,
                layout.entries(),
                layout.stride(),
                maxWr,
                SRQ_PROD,
                SRQ_CONS,
                "shared receive queue");
        return new AttachedSrq(handle, ring, q, granted[1]);
    }

    /** Posting thread: {@code wr} was validated by {@link IbvSrq}. */
    void postRecv(IbvContext ctx, IbvRecvWr wr) {
        queue.post(ctx, wr);
    }

    /** MODIFY_SRQ with {@code IBV_SRQ_LIMIT}: arms the limit event. */
    void modifyLimit(IbvContext ctx, int srqLimit) {
        ByteBuffer b = VnicClient.body(24);
        b.putInt(handle)
                .putInt(SRQ_ATTR_LIMIT)
                .putInt(0)
                .putInt(0)
                .putInt(srqLimit)
                .putInt(0);
        ctx.attached.call(MODIFY_SRQ, b);
    }

    /**
     * MODIFY_SRQ with {@code mask} (the caller holds the context's lock and no thread posts to the
     * queue meanwhile). A queue growing beyond its ring's slots gets a new ring whose counters start
     * where the old one's stand; the vNIC takes the old ring's receives and moves over.
     */
    void modify(IbvContext ctx, int mask, int maxWr, int srqLimit) {
        boolean resize = (mask & IbvSrqAttr.MAX_WR) != 0;
        SrqRingLayout grown =
                resize && maxWr >= 1 && SrqRingLayout.of(maxWr, maxSge).entries() > queue.entries()
                        ? SrqRingLayout.of(maxWr, maxSge)
                        : null;
        SharedRing next = null;
        ByteBuffer b = VnicClient.body(grown != null ? 32 : 24);
        b.putInt(handle).putInt(mask).putInt(maxWr).putInt(0).putInt(srqLimit).putInt(0);
        if (grown != null) {
            next = AttachedCq.ring("vrdma-srq", grown.bytes());
            next.setIntRelease(SRQ_PROD, queue.prod());
            next.setIntRelease(SRQ_CONS, ring.getIntAcquire(SRQ_CONS));
            b.putInt(next.fd()).putInt((int) next.bytes());
            ctx.attached.callWithRing(MODIFY_SRQ, b, next);
        } else {
            ctx.attached.call(MODIFY_SRQ, b);
        }
        if (resize) {
            SharedRing old = ring;
            if (next != null) {
                ring = next;
            }
            queue = queue.resized(ring, next != null ? grown.entries() : queue.entries(), maxWr);
            if (next != null) {
                old.close();
            }
        }
    }

    /** QUERY_SRQ: {@code max_wr}, {@code max_sge}, {@code srq_limit}. */
    int[] query(IbvContext ctx) {
        ByteBuffer r = AttachedMemory.call(ctx, QUERY_SRQ, handle);
        r.getInt(); // handle
        r.getInt(); // mask
        return new int[] {r.getInt(), r.getInt(), r.getInt()};
    }

    /** Receives posted the vNIC has not consumed yet. */
    int outstanding() {
        return queue.outstanding();
    }

    /** DESTROY_SRQ (EBUSY while QPs use it), then the ring is unmapped on this side too. */
    void destroy(IbvContext ctx) {
        AttachedMemory.call(ctx, DESTROY_SRQ, handle);
        ring.close();
    }
}
