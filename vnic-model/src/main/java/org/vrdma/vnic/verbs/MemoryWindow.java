package org.vrdma.vnic.verbs;

/**
 * A memory window ({@code struct ibv_mw}): an rkey that grants remote access to part of a memory
 * region, bound and invalidated through a queue pair's send queue.
 *
 * <ul>
 *   <li><b>Type 1</b> ({@link QueuePair#bindMw}): belongs to its protection domain; every bind
 *       gives it a new rkey (the key byte advances) and rebinding replaces the old range at once.
 *   <li><b>Type 2</b> ({@link WrOpcode#BIND_MW}): bound through one queue pair, with the rkey the
 *       application chose (the window's index, its own key byte); only that queue pair's peer can
 *       use it. It must be invalidated ({@link WrOpcode#LOCAL_INV}, or a peer's {@link
 *       WrOpcode#SEND_WITH_INV}) before it can be bound again.
 * </ul>
 *
 * <p>A remote access through a window is checked against the window (bound, key, range, access,
 * queue pair) and then against its region; anything else is a remote access error, as for a bad
 * region rkey. Its region cannot be deregistered while the window is bound to it (EBUSY).
 */
public final class MemoryWindow {
    /** {@code IBV_MW_TYPE_1}. */
    public static final int TYPE_1 = 1;
    /** {@code IBV_MW_TYPE_2}. */
    public static final int TYPE_2 = 2;

    private final ProtectionDomain pd;
    private final int type;
    /** The table index in the key's upper 24 bits. */
    private final int index;

    private int rkey;
    /** Type 1: the last rkey handed out by a bind posted (it takes effect when the bind executes). */
    private int issuedRkey;

    private boolean allocated = true;
    private MemoryRegion mr;
    private long addr;
    private long length;
    private int access;
    /** Type 2: the queue pair it was bound through. */
    private QueuePair qp;

    MemoryWindow(final ProtectionDomain pd, final int type, final int rkey) {
        this.pd = pd;
        this.type = type;
        this.index = rkey >>> 8;
        this.rkey = rkey;
        this.issuedRkey = rkey;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    /** {@link #TYPE_1} or {@link #TYPE_2}. */
    public int type() {
        return type;
    }

    /** The current rkey ({@code mw->rkey}); for type 1 the rkey of the last bind posted. */
    public int rkey() {
        return type == TYPE_1 ? issuedRkey : rkey;
    }

    /** True while bound to a region with a key a remote peer may use. */
    public boolean isBound() {
        return mr != null;
    }

    /** The region it is bound to, or null. */
    public MemoryRegion mr() {
        return mr;
    }

    public long addr() {
        return addr;
    }

    public long length() {
        return length;
    }

    /** The {@link AccessFlags} it grants while bound. */
    public int access() {
        return access;
    }

    /**
     * Deallocates the window ({@code ibv_dealloc_mw}): unbinds it, and its rkey stops working at
     * once.
     */
    public void deallocate() {
        if (!allocated) {
            throw new VerbsException(Errno.EINVAL, "memory window already deallocated");
        }
        unbind();
        allocated = false;
        pd.context().device().unregisterMw(this);
        pd.onChildDestroyed();
    }

    public boolean isAllocated() {
        return allocated;
    }

    int index() {
        return index;
    }

    /** Type 1: the rkey a new bind will give the window (the key byte advanced, as ibv_inc_rkey). */
    int peekType1Rkey() {
        return (issuedRkey & ~0xFF) | ((issuedRkey + 1) & 0xFF);
    }

    /** Type 1: a bind with {@code key} was posted. */
    void issueType1Rkey(final int key) {
        issuedRkey = key;
    }

    /** True if {@code key} names this window as currently bound. */
    boolean matches(final int key) {
        return allocated && mr != null && key == rkey;
    }

    /** True if a remote access of {@code [va, va + len)} with {@code required} is allowed through {@code via}. */
    boolean allows(final QueuePair via, final long va, final long len, final int required) {
        if (type == TYPE_2 ? qp != via : pd != via.pd()) {
            return false;
        }
        final long off = va - addr;
        return AccessFlags.has(access, required)
                && len >= 0
                && off >= 0
                && off <= length
                && len <= length - off
                && mr.isRegistered();
    }

    /**
     * Executes a bind (the send queue reached it): null on success, else the completion status. The
     * window keeps its old binding when the bind fails.
     */
    WcStatus bind(
            final QueuePair via,
            final int newRkey,
            final MemoryRegion region,
            final long bindAddr,
            final long bindLength,
            final int bindAccess) {
        if (!allocated || pd != via.pd()) {
            return WcStatus.MW_BIND_ERR;
        }
        if (type == TYPE_2 && (mr != null || (newRkey >>> 8) != index)) {
            return WcStatus.MW_BIND_ERR; // a bound type 2 window must be invalidated first
        }
        if (region == null && bindLength == 0 && type == TYPE_1) {
            unbind(); // ibv_bind_mw without a region: the window grants nothing, under a new key
            rkey = newRkey;
            return null;
        }
        if (region == null
                || !region.isRegistered()
                || region.pd() != pd
                || !AccessFlags.has(region.access(), AccessFlags.MW_BIND)
                || (bindAccess & ~AccessFlags.REMOTE) != 0
                || !region.contains(bindAddr, bindLength)) {
            return WcStatus.MW_BIND_ERR;
        }
        if ((bindAccess & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0
                && !AccessFlags.has(region.access(), AccessFlags.LOCAL_WRITE)) {
            return WcStatus.MW_BIND_ERR;
        }
        unbind();
        mr = region;
        region.onWindowBound();
        addr = bindAddr;
        length = bindLength;
        access = bindAccess;
        rkey = newRkey;
        qp = type == TYPE_2 ? via : null;
        return null;
    }

    /**
     * Invalidates a type 2 window through {@code via} (local or remote invalidation): false if the
     * window cannot be invalidated there (type 1, not bound, another domain, another queue pair).
     */
    boolean invalidate(final QueuePair via, final boolean remote) {
        if (type != TYPE_2 || mr == null || pd != via.pd() || (remote && qp != via)) {
            return false;
        }
        unbind();
        return true;
    }

    private void unbind() {
        if (mr != null) {
            mr.onWindowUnbound();
            mr = null;
            qp = null;
            access = 0;
            length = 0;
        }
    }

    @Override
    public String toString() {
        return "MemoryWindow{type=" + type + ", rkey=0x" + Integer.toHexString(rkey()) + ", bound=" + isBound()
                + (mr != null ? ", [0x" + Long.toHexString(addr) + ", +" + length + "), access=" + access : "") + '}';
    }
}
