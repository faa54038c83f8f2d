package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.vrdma.shim.ControlProtocol;
import org.vrdma.shim.SharedRing;
import org.vrdma.shim.VnicClient;
import org.vrdma.vnic.verbs.VerbsException;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;

/**
 * The completion ring of a CQ in a vNIC process: a sealed memfd this JVM creates and the vNIC maps,
 * which the vNIC fills as the transport publishes completions; {@link #poll} reads it without a
 * system call (the layout of vrdma_proto.h, as the native library reads it).
 */
final class AttachedCq {
    private static final WcStatus[] STATUSES = WcStatus.values();

    final int handle;
    final long cookie;
    private final SharedRing ring;
    private final int mask;
    private final int capacity;
    private final AtomicInteger deferredAcks = new AtomicInteger();
    /** Next slot to read; one thread at a time polls. */
    private int cons;

    private AttachedCq(int handle, long cookie, SharedRing ring, int entries, int capacity) {
        this.handle = handle;
        this.cookie = cookie;
        this.ring = ring;
        this.mask = entries - 1;
        this.capacity = capacity;
    }

    /** CREATE_CQ with a completion ring; the channel's events will carry the new cookie. */
    static IbvCq create(IbvContext ctx, int cqe, IbvCompChannel channel) {
        int maxCqe = ctx.queryDevice().maxCqe();
        if (cqe < 1 || cqe > maxCqe) {
            throw new IbvInvalidArgumentException("cqe " + cqe + " outside [1, " + maxCqe + "]");
        }
        SharedRing ring = ring("vrdma-cq", ControlProtocol.cqRingBytes(cqe));
        long cookie = ctx.attached.newCookie();
        ByteBuffer req = VnicClient.body(32);
        req.putInt(cqe).putInt(channel == null ? 0 : channel.handle).putInt(0).putInt(0);
        req.putLong(cookie).putInt(ring.fd()).putInt((int) ring.bytes());
        ByteBuffer r = ctx.attached.callWithRing(CREATE_CQ, req, ring);
        int handle = r.getInt();
        int granted = r.getInt();
        AttachedCq a = new AttachedCq(handle, cookie, ring, ControlProtocol.cqRingEntries(cqe), granted);
        IbvCq cq = new IbvCq(ctx, channel, a);
        ctx.attached.cqByCookie.put(cookie, cq);
        return cq;
    }

    /** A ring shared with the vNIC process, or the typed error that prevented it. */
    static SharedRing ring(String name, long bytes) {
        try {
            return SharedRing.create(name, bytes);
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
    }

    int capacity() {
        return capacity;
    }

    int poll(IbvWc[] wcs, int max) {
        int prod = ring.getIntAcquire(CQ_PROD);
        int limit = Math.min(max, wcs.length);
        int n = 0;
        while (n < limit && cons != prod) {
            long at = CQ_RING_HDR + (long) (cons & mask) * CQ_SLOT_BYTES;
            IbvWc wc = wcs[n++];
            wc.wrId = ring.getLong(at);
            int status = ring.getInt(at + 8);
            wc.status = status >= 0 && status < STATUSES.length ? STATUSES[status] : WcStatus.GENERAL_ERR;
            WcOpcode op = ControlProtocol.wcOpcodeOf(ring.getInt(at + 12));
            wc.opcode = op == null ? WcOpcode.SEND : op;
            wc.vendorErr = ring.getInt(at + 16);
            wc.byteLen = ring.getInt(at + 20);
            wc.immData = ring.getInt(at + 24);
            wc.qpNum = ring.getInt(at + 28);
            wc.srcQp = ring.getInt(at + 32);
            wc.wcFlags = ring.getInt(at + 36);
            wc.pkeyIndex = ring.getInt(at + 40) & 0xFFFF;
            wc.srcIpv4 = ring.getInt(at + 48);
            wc.solicited = (ring.getInt(at + 52) & ControlProtocol.WC_SLOT_SOLICITED) != 0;
            cons++;
        }
        if (n > 0) {
            ring.setIntRelease(CQ_CONS, cons);
        }
        return n;
    }

    int size() {
        return ring.getIntAcquire(CQ_PROD) - cons;
    }

    void reqNotify(IbvContext ctx, boolean solicitedOnly) {
        AttachedMemory.call(ctx, REQ_NOTIFY_CQ, handle, solicitedOnly ? 1 : 0);
    }

    /**
     * Acknowledged events are counted here and told to the vNIC with DESTROY_CQ, the only request
     * they matter for: no control round trip per event on the wait path.
     */
    void ackEvents(int n) {
        deferredAcks.addAndGet(n);
    }

    /** ACK_CQ_EVENTS for what was acknowledged, DESTROY_CQ, then the ring is unmapped here too. */
    void destroy(IbvContext ctx) {
        int acks = deferredAcks.getAndSet(0);
        if (acks > 0) {
            AttachedMemory.call(ctx, ACK_CQ_EVENTS, handle, acks);
        }
        AttachedMemory.call(ctx, DESTROY_CQ, handle);
        ctx.attached.cqByCookie.remove(cookie);
        ring.close();
    }
}
