package org.vrdma.verbs;

import static org.vrdma.shim.ControlProtocol.*;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.vrdma.shim.SharedMemory;
import org.vrdma.shim.VnicClient;

/**
 * Memory registration of an attached context: REG_MR names the memfd of {@link SharedMemory} (the
 * vNIC process maps it: zero-copy) or, for any other native segment, only its address (the vNIC
 * process reaches it with {@code process_vm_readv/writev}).
 */
final class AttachedMemory {
    private AttachedMemory() {}

    static IbvMr register(IbvPd pd, MemorySegment segment, int access) {
        IbvContext ctx = pd.context();
        if (!segment.scope().isAlive()) {
            throw new IbvFaultException("segment's arena is closed");
        }
        SharedMemory shared = ctx.attached.sharedMemoryOf(segment);
        ByteBuffer req = VnicClient.body(shared != null ? 48 : 32);
        req.putInt(pd.handle).putInt(access).putLong(segment.address()).putLong(segment.byteSize());
        req.putLong(segment.address());
        if (shared != null) {
            req.putInt(shared.fd()).putInt(0).putLong(shared.fileOffset(segment.address()));
        }
        synchronized (ctx) {
            pd.checkLive();
            ByteBuffer r = ctx.attached.call(REG_MR, req);
            int handle = r.getInt();
            int lkey = r.getInt();
            int rkey = r.getInt();
            boolean zeroCopy = (r.getInt() & MR_ZERO_COPY) != 0;
            IbvMr m = new IbvMr(pd, segment, access, handle, lkey, rkey, zeroCopy);
            ctx.mrByIndex.set(lkey >>> 8, m);
            pd.mrs.add(m);
            return m;
        }
    }

    /** DEREG_MR; with {@code quietly}, a region already deregistered is left alone. */
    static void deregister(IbvMr mr, boolean quietly) {
        IbvContext ctx = mr.pd().context();
        synchronized (ctx) {
            if (!mr.isRegistered()) {
                if (quietly) {
                    return;
                }
                throw new IbvInvalidArgumentException("memory region already deregistered");
            }
            call(ctx, DEREG_MR, mr.handle);
            mr.onDeregistered();
        }
    }

    /** A request whose body is {@code u32 handle, u32 0} (DEALLOC_PD, DEREG_MR, DESTROY_*). */
    static ByteBuffer call(IbvContext ctx, int op, int handle) {
        return call(ctx, op, handle, 0);
    }

    /** A request whose body is {@code u32 handle, u32 arg}. */
    static ByteBuffer call(IbvContext ctx, int op, int handle, int arg) {
        ByteBuffer b = VnicClient.body(8);
        b.putInt(handle).putInt(arg);
        return ctx.attached.call(op, b);
    }
}
