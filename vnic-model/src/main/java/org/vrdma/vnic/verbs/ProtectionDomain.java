package org.vrdma.vnic.verbs;

import java.util.Objects;
import org.vrdma.vnic.memory.MemoryRegionBacking;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions, queue pairs, shared receive queues and
 * address handles of one domain can only be used together.
 */
public final class ProtectionDomain {
    private final Context context;
    private int children;
    private boolean allocated = true;

    ProtectionDomain(final Context context) {
        this.context = context;
    }

    public Context context() {
        return context;
    }

    /**
     * Registers {@code backing} as the addresses {@code [addr, addr + backing.capacity())} ({@code
     * ibv_reg_mr}).
     *
     * @param access {@link AccessFlags}; remote write or atomic access needs local write as well
     * @throws VerbsException EINVAL for unknown or inconsistent flags, ENOMEM when the device is out of
     *     memory regions
     */
    public MemoryRegion registerMemoryRegion(final MemoryRegionBacking backing, final long addr, final int access) {
        Objects.requireNonNull(backing, "backing");
        checkAllocated();
        if ((access & ~AccessFlags.SUPPORTED) != 0) {
            throw new VerbsException(Errno.EINVAL, "unsupported access flags 0x" + Integer.toHexString(access));
        }
        if ((access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0
                && (access & AccessFlags.LOCAL_WRITE) == 0) {
            throw new VerbsException(Errno.EINVAL, "remote write/atomic access requires LOCAL_WRITE");
        }
        final long length = backing.capacity();
        if (length <= 0 || length > context.device().attributes().maxMrSize()) {
            throw new VerbsException(Errno.EINVAL, "invalid memory region length " + length);
        }
        if (addr < 0 || addr + length < 0) {
            throw new VerbsException(Errno.EINVAL, "address range overflows");
        }
        final MemoryRegion mr = context.device().registerMr(this, backing, addr, length, access);
        children++;
        return mr;
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}), unbound.
     *
     * @param type {@link MemoryWindow#TYPE_1} or {@link MemoryWindow#TYPE_2}
     * @throws VerbsException EINVAL for another type, ENOMEM when the device is out of windows
     */
    public MemoryWindow allocMemoryWindow(final int type) {
        checkAllocated();
        if (type != MemoryWindow.TYPE_1 && type != MemoryWindow.TYPE_2) {
            throw new VerbsException(Errno.EINVAL, "memory window type " + type);
        }
        final MemoryWindow mw = context.device().registerMw(this, type);
        children++;
        return mw;
    }

    /** Frees the domain ({@code ibv_dealloc_pd}); EBUSY while anything still uses it. */
    public void deallocate() {
        checkAllocated();
        if (children != 0) {
            throw new VerbsException(Errno.EBUSY, children + " objects still use this protection domain");
        }
        allocated = false;
        context.onPdDeallocated();
    }

    /** Creates an address handle for UD sends ({@code ibv_create_ah}). */
    public AddressHandle createAddressHandle(final AhAttr attr) {
        checkAllocated();
        Objects.requireNonNull(attr, "attr");
        if (attr.portNum() != 1) {
            throw new VerbsException(Errno.EINVAL, "invalid port " + attr.portNum());
        }
        context.device().reserve(Device.Resource.AH);
        children++;
        return new AddressHandle(this, attr);
    }

    void checkAllocated() {
        if (!allocated) {
            throw new VerbsException(Errno.EINVAL, "protection domain was deallocated");
        }
    }

    void onChildCreated() {
        children++;
    }

    void onMrDeregistered() {
        children--;
    }

    void onChildDestroyed() {
        children--;
    }
}
