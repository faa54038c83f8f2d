package org.vrdma.verbs;

import org.vrdma.vnic.verbs.AddressHandle;

/**
 * An address handle ({@code struct ibv_ah}): where a UD send goes. On an attached device it lives in
 * the vNIC process, and a send names it by its handle, which resolves in this context only.
 */
public final class IbvAh implements AutoCloseable {
    private final IbvPd pd;
    /** Embedded: the model's handle; null when attached. */
    final AddressHandle ah;
    /** Attached: the vNIC process's handle; 0 on an embedded host. */
    final int handle;

    private final IbvGid dgid;
    volatile boolean live = true;

    IbvAh(IbvPd pd, AddressHandle ah, IbvGid dgid) {
        this.pd = pd;
        this.ah = ah;
        this.handle = 0;
        this.dgid = dgid;
    }

    /** A handle in a vNIC process. */
    IbvAh(IbvPd pd, int handle, IbvGid dgid) {
        this.pd = pd;
        this.ah = null;
        this.handle = handle;
        this.dgid = dgid;
    }

    /** The protection domain. */
    public IbvPd pd() {
        return pd;
    }

    /** The destination GID. */
    public IbvGid dgid() {
        return dgid;
    }

    /** Destroys the handle ({@code ibv_destroy_ah}); EINVAL if already destroyed. */
    public void destroy() {
        if (ah == null) {
            destroyAttached();
            return;
        }
        pd.context().loop.run(this::destroyOnLoop);
    }

    /** Destroys the handle unless that was already done. */
    @Override
    public void close() {
        if (ah == null) {
            synchronized (pd.context()) {
                if (live) {
                    destroyAttached();
                }
            }
            return;
        }
        pd.context().loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    private void destroyAttached() {
        IbvContext ctx = pd.context();
        synchronized (ctx) {
            if (!live) {
                throw new IbvInvalidArgumentException("address handle destroyed");
            }
            AttachedMemory.call(ctx, org.vrdma.shim.ControlProtocol.DESTROY_AH, handle);
            live = false;
            pd.ahs.remove(this);
        }
    }

    void destroyOnLoop() {
        ah.destroy();
        live = false;
        pd.ahs.remove(this);
    }
}
