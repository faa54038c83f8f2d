package org.vrdma.verbs;

import java.lang.foreign.MemorySegment;
import org.vrdma.vnic.verbs.MemoryRegion;

/**
 * A registered memory region ({@code struct ibv_mr}): an off-heap segment the vNIC may read and
 * write. Its addresses are the segment's native addresses, as with libibverbs: a scatter/gather
 * element names {@code addr() + offset}, and a peer names {@code addr() + offset} with {@link
 * #rkey()}. Deregistering stops both keys at once; the memory stays the application's.
 *
 * <p>On an attached device the vNIC process reaches the region either through the memfd it shares
 * with this JVM ({@link #isZeroCopy()}: memory from {@link IbvContext#allocBuffer}) or with {@code
 * process_vm_readv/writev}.
 */
public final class IbvMr implements AutoCloseable {
    private final IbvPd pd;
    private final MemoryRegion mr;
    private final MemorySegment segment;
    private final int lkey;
    private final int rkey;
    /** The vNIC process's handle of an attached region; 0 on an embedded host. */
    final int handle;

    private final boolean zeroCopy;
    private final long addr;
    private final long length;
    private final int access;
    private volatile boolean registered = true;

    IbvMr(IbvPd pd, MemoryRegion mr, SegmentMemory memory) {
        this.pd = pd;
        this.mr = mr;
        this.segment = memory.segment();
        this.lkey = mr.lkey();
        this.rkey = mr.rkey();
        this.addr = mr.addr();
        this.length = mr.length();
        this.access = mr.access();
        this.handle = 0;
        this.zeroCopy = true;
    }

    /** A region registered in a vNIC process under {@code handle}. */
    IbvMr(IbvPd pd, MemorySegment segment, int access, int handle, int lkey, int rkey, boolean zeroCopy) {
        this.pd = pd;
        this.mr = null;
        this.segment = segment;
        this.lkey = lkey;
        this.rkey = rkey;
        this.addr = segment.address();
        this.length = segment.byteSize();
        this.access = access;
        this.handle = handle;
        this.zeroCopy = zeroCopy;
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
        return rkey;
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
        return segment;
    }

    /**
     * True when the device reaches the region without a system call: always on an embedded host; on
     * an attached device when the vNIC process maps the region's memfd.
     */
    public boolean isZeroCopy() {
        return zeroCopy;
    }

    /** True until {@link #dereg()}. */
    public boolean isRegistered() {
        return registered;
    }

    /** Deregisters the region ({@code ibv_dereg_mr}); EINVAL if already deregistered. */
    public void dereg() {
        if (pd.context().attached != null) {
            AttachedMemory.deregister(this, false);
            return;
        }
        pd.context().loop.run(this::deregOnLoop);
    }

    /** Deregisters the region unless that was already done. */
    @Override
    public void close() {
        if (pd.context().attached != null) {
            AttachedMemory.deregister(this, true);
            return;
        }
        pd.context().loop.closeIfLive(() -> registered, this::deregOnLoop);
    }

    /** An attached region is gone from the vNIC process. */
    void onDeregistered() {
        registered = false;
        pd.context().mrByIndex.compareAndSet(lkey >>> 8, this, null);
        pd.mrs.remove(this);
    }

    void deregOnLoop() {
        mr.deregister();
        onDeregistered();
    }

    /** The model's region (embedded host), or null. */
    MemoryRegion model() {
        return mr;
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
