package org.vrdma.vnic.verbs;

/** Access flags of memory regions and queue pairs ({@code enum ibv_access_flags}, same bit values). */
public final class AccessFlags {
    /** The local HCA may write (needed for receive buffers, READ targets, atomic results). */
    public static final int LOCAL_WRITE = 1;
    /** Remote peers may RDMA WRITE. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Remote peers may RDMA READ. */
    public static final int REMOTE_READ = 1 << 2;
    /** Remote peers may perform atomics. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Memory windows may be bound to the region. */
    public static final int MW_BIND = 1 << 4;
    /** Zero-based addressing of a window or region (not supported: addresses are virtual). */
    public static final int ZERO_BASED = 1 << 5;

    /** All flags this device supports. */
    public static final int SUPPORTED = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND;
    /** The flags a memory window may grant. */
    public static final int REMOTE = REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private AccessFlags() {}

    /** True if every bit of {@code required} is set in {@code flags}. */
    public static boolean has(final int flags, final int required) {
        return (flags & required) == required;
    }
}
