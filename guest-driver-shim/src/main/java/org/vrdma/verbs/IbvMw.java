package org.vrdma.verbs;

import org.vrdma.vnic.verbs.MemoryWindow;

/**
 * A memory window ({@code struct ibv_mw}): an rkey granting a peer access to part of a memory
 * region registered with {@link org.vrdma.vnic.verbs.AccessFlags#MW_BIND}, bound and invalidated
 * through a queue pair's send queue.
 *
 * <ul>
 *   <li><b>Type 1</b>: {@link IbvQp#bindMw} binds it (any QP of its domain) and gives it a new rkey
 *       each time; a bind without a region leaves it granting nothing.
 *   <li><b>Type 2</b>: a {@link org.vrdma.vnic.verbs.WrOpcode#BIND_MW} request binds it through one
 *       QP with the rkey the application chose ({@link #nextRkey()}); only that QP's peer can use
 *       it, and it must be invalidated ({@code LOCAL_INV}, or the peer's {@code SEND_WITH_INV})
 *       before it is bound again.
 * </ul>
 *
 * A peer's access outside the window's range or rights, or after its invalidation, fails with
 * REM_ACCESS_ERR and leaves the memory untouched. Its region cannot be deregistered while it is
 * bound (EBUSY).
 */
public final class IbvMw implements AutoCloseable {
    /** {@code IBV_MW_TYPE_1}. */
    public static final int TYPE_1 = MemoryWindow.TYPE_1;
    /** {@code IBV_MW_TYPE_2}. */
    public static final int TYPE_2 = MemoryWindow.TYPE_2;

    private final IbvPd pd;
    private final int type;
    /** Embedded: the model's window; null when attached. */
    final MemoryWindow mw;
    /** The vNIC process's handle of an attached window; 0 on an embedded host. */
    final int handle;

    private volatile int rkey;
    private volatile boolean live = true;

    IbvMw(IbvPd pd, MemoryWindow mw) {
        this.pd = pd;
        this.type = mw.type();
        this.mw = mw;
        this.handle = 0;
        this.rkey = mw.rkey();
    }

    IbvMw(IbvPd pd, int type, int handle, int rkey) {
        this.pd = pd;
        this.type = type;
        this.mw = null;
        this.handle = handle;
        this.rkey = rkey;
    }

    /** {@link #TYPE_1} or {@link #TYPE_2}. */
    public int type() {
        return type;
    }

    /** The protection domain. */
    public IbvPd pd() {
        return pd;
    }

    /** The current rkey ({@code mw->rkey}): type 1 after {@link IbvQp#bindMw}, type 2 after a bind posted. */
    public int rkey() {
        return rkey;
    }

    /** The rkey {@code ibv_inc_rkey} makes of the current one: what a new bind usually asks for. */
    public int nextRkey() {
        return incRkey(rkey);
    }

    /** {@code ibv_inc_rkey}: the key byte advanced, the index kept. */
    public static int incRkey(int rkey) {
        return (rkey & ~0xFF) | ((rkey + 1) & 0xFF);
    }

    /** True until {@link #dealloc()}. */
    public boolean isAllocated() {
        return live;
    }

    void rkey(int key) {
        rkey = key;
    }

    void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("memory window deallocated");
        }
    }

    /** Deallocates the window ({@code ibv_dealloc_mw}): unbinds it; its rkey stops working at once. */
    public void dealloc() {
        IbvContext ctx = pd.context();
        if (ctx.attached != null) {
            synchronized (ctx) {
                checkLive();
                AttachedMemory.call(ctx, org.vrdma.shim.ControlProtocol.DEALLOC_MW, handle);
                onDeallocated();
            }
            return;
        }
        ctx.loop.run(() -> {
            checkLive();
            mw.deallocate();
            onDeallocated();
        });
    }

    /** Deallocates the window unless that was already done. */
    @Override
    public void close() {
        if (live) {
            try {
                dealloc();
            } catch (IbvInvalidArgumentException e) {
                // deallocated meanwhile
            }
        }
    }

    void onDeallocated() {
        live = false;
        pd.mws.remove(this);
    }

    @Override
    public String toString() {
        return "IbvMw{type=" + type + ", rkey=0x" + Integer.toHexString(rkey) + '}';
    }
}
