package org.vrdma.verbs;

import java.lang.foreign.MemorySegment;
import org.vrdma.vnic.verbs.MemoryRegion;

/**
 * A registered memory region ({@code struct ibv_mr}): an off-heap segment the vNIC may read and
 * write. Its addresses are the segment's native addresses, as with libibverbs: a scatter/gather
 * element names {@code addr() + offset}, and a peer names {@code addr() + offset} with {@link
 * #rkey()}. Deregistering stops both keys at once; the memory stays the application's.
 */
public final class IbvMr implements AutoCloseable {
    private final IbvPd pd;
    private final MemoryRegion mr;
    private final SegmentMemory memory;
    private final int lkey;
    private final long addr;
    private final long length;
    private final int access;
    private volatile boolean registered = true;

    IbvMr(IbvPd pd, MemoryRegion mr, SegmentMemory memory) {
        this.pd = pd;
        this.mr = mr;
        this.memory = memory;
        this.lkey = mr.lkey();
        this.addr = mr.addr();
        this.length = mr.length();
        this.access = mr.access();
    }

    /** The protection domain. */
    public IbvPd pd() {
        return pd;
    }

    /** The local key, for scatter/gather elements. */
    public int lkey() {
        return lkey;
    }

    /** The remote key a peer names in RDMA READ, WRITE and atomics. */
    public int rkey() {
        return mr.rkey();
    }

    /** The first address of the region (the segment's native address). */
    public long addr() {
        return addr;
    }

    /** Length in bytes. */
    public long length() {
        return length;
    }

    /** {@link org.vrdma.vnic.verbs.AccessFlags} bits. */
    public int access() {
        return access;
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return memory.segment();
    }

    /** True until {@link #dereg()}. */
    public boolean isRegistered() {
        return registered;
    }

    /** Deregisters the region ({@code ibv_dereg_mr}); EINVAL if already deregistered. */
    public void dereg() {
        pd.context().loop.run(this::deregOnLoop);
    }

    /** Deregisters the region unless that was already done. */
    @Override
    public void close() {
        pd.context().loop.closeIfLive(() -> registered, this::deregOnLoop);
    }

    void deregOnLoop() {
        mr.deregister();
        registered = false;
        pd.context().mrByIndex.compareAndSet(lkey >>> 8, this, null);
        pd.mrs.remove(this);
    }

    /** True if {@code [address, address + len)} lies inside the region. */
    boolean contains(long address, long len) {
        long off = address - addr;
        return len >= 0 && off >= 0 && off <= length && len <= length - off;
    }

    @Override
    public String toString() {
        return "IbvMr{lkey=0x" + Integer.toHexString(lkey) + ", addr=0x" + Long.toHexString(addr) + ", length=" + length
                + '}';
    }
}
