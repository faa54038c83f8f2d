package org.vrdma.vnic.verbs;

/** Flags of a send work request ({@code enum ibv_send_flags}, same bit values). */
public final class SendFlags {
    /** Wait for prior RDMA READ and atomic operations to complete first. */
    public static final int FENCE = 1;
    /** Generate a completion even if the QP was created without {@code sq_sig_all}. */
    public static final int SIGNALED = 1 << 1;
    /** Set the solicited-event bit on the last packet (wakes a solicited-only CQ notification). */
    public static final int SOLICITED = 1 << 2;
    /** The payload is copied at post time from {@link SendWorkRequest#inlineData}. */
    public static final int INLINE = 1 << 3;

    private SendFlags() {}
}
