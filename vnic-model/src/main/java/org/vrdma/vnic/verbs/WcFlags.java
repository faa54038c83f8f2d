package org.vrdma.vnic.verbs;

/** Flags of a work completion ({@code enum ibv_wc_flags}, same bit values). */
public final class WcFlags {
    /** A 40-byte GRH precedes the payload in the receive buffer (UD). */
    public static final int GRH = 1;
    /** {@link WorkCompletion#immData} is valid. */
    public static final int WITH_IMM = 1 << 1;

    private WcFlags() {}
}
