package org.vrdma.verbs;

import org.vrdma.vnic.verbs.AddressHandle;

/** An address handle ({@code struct ibv_ah}): where a UD send goes. */
public final class IbvAh implements AutoCloseable {
    private final IbvPd pd;
    final AddressHandle ah;
    private final IbvGid dgid;
    volatile boolean live = true;

    IbvAh(IbvPd pd, AddressHandle ah, IbvGid dgid) {
        this.pd = pd;
        this.ah = ah;
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
        pd.context().loop.run(this::destroyOnLoop);
    }

    /** Destroys the handle unless that was already done. */
    @Override
    public void close() {
        pd.context().loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    void destroyOnLoop() {
        ah.destroy();
        live = false;
        pd.ahs.remove(this);
    }
}
