package org.vrdma.vnic.verbs;

/** Flags of a work completion ({@code enum ibv_wc_flags}, same bit values). */
public final class WcFlags {
    /** A 40-byte GRH precedes the payload in the receive buffer (UD). */
    public static final int GRH = 1;
    /** {@link WorkCompletion#immData} is valid. */
    public static final int WITH_IMM = 1 << 1;
    /**
     * The SEND invalidated the rkey in {@link WorkCompletion#immData} ({@code IBV_WC_WITH_INV}; in
     * {@code struct ibv_wc} {@code invalidated_rkey} shares the union with {@code imm_data}).
     */
    public static final int WITH_INV = 1 << 3;

    private WcFlags() {}
}
