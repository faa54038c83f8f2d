package org.vrdma.vnic.verbs;

import org.vrdma.vnic.memory.MemoryRegionBacking;

/**
 * A registered memory region ({@code struct ibv_mr}): a range of addresses {@code [addr, addr +
 * length)} backed by a {@link MemoryRegionBacking}, reachable locally with {@link #lkey()} and
 * remotely with {@link #rkey()} within its protection domain and access flags.
 *
 * <p>Keys are a 24-bit table index and an 8-bit generation, so a key of a deregistered region never
 * matches the region that reuses its slot.
 */
public final class MemoryRegion {
    private final ProtectionDomain pd;
    private final MemoryRegionBacking backing;
    private final long addr;
    private final long length;
    private final int access;
    private final int key;
    private boolean registered = true;
    /** Memory windows bound to the region: it cannot be deregistered meanwhile. */
    private int boundWindows;

    MemoryRegion(
            final ProtectionDomain pd,
            final MemoryRegionBacking backing,
            final long addr,
            final long length,
            final int access,
            final int key) {
        this.pd = pd;
        this.backing = backing;
        this.addr = addr;
        this.length = length;
        this.access = access;
        this.key = key;
    }

    /**
     * Deregisters the region ({@code ibv_dereg_mr}); its keys stop working at once. EBUSY while a
     * memory window is bound to it (as {@code ibv_dereg_mr} documents).
     */
    public void deregister() {
        if (!registered) {
            throw new VerbsException(Errno.EINVAL, "memory region already deregistered");
        }
        if (boundWindows != 0) {
            throw new VerbsException(Errno.EBUSY, boundWindows + " memory windows are bound to this region");
        }
        registered = false;
        pd.context().device().unregisterMr(this);
        pd.onMrDeregistered();
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public MemoryRegionBacking backing() {
        return backing;
    }

    /** First address of the region. */
    public long addr() {
        return addr;
    }

    public long length() {
        return length;
    }

    /** {@link AccessFlags} bits. */
    public int access() {
        return access;
    }

    public int lkey() {
        return key;
    }

    public int rkey() {
        return key;
    }

    public boolean isRegistered() {
        return registered;
    }

    /** Memory windows bound to this region. */
    public int boundWindows() {
        return boundWindows;
    }

    void onWindowBound() {
        boundWindows++;
    }

    void onWindowUnbound() {
        boundWindows--;
    }

    /** True if {@code [address, address + len)} lies inside the region. */
    boolean contains(final long address, final long len) {
        final long off = address - addr;
        return len >= 0 && off >= 0 && off <= length && len <= length - off;
    }
}
