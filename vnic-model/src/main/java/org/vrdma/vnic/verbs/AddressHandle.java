package org.vrdma.vnic.verbs;

/** An address handle ({@code struct ibv_ah}): where a UD send goes. */
public final class AddressHandle {
    private final ProtectionDomain pd;
    private final AhAttr attr;
    private boolean live = true;

    AddressHandle(final ProtectionDomain pd, final AhAttr attr) {
        this.pd = pd;
        this.attr = attr;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public AhAttr attr() {
        return attr;
    }

    boolean isLive() {
        return live;
    }

    /** Destroys the handle ({@code ibv_destroy_ah}). */
    public void destroy() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "address handle already destroyed");
        }
        live = false;
        pd.context().device().release(Device.Resource.AH);
        pd.onChildDestroyed();
    }
}
