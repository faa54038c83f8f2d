package org.vrdma.vnic.verbs;

/**
 * Queue sizes of a queue pair ({@code struct ibv_qp_cap}). On creation the device writes back the
 * sizes it actually allocated.
 */
public final class QpCap {
    public int maxSendWr;
    public int maxRecvWr;
    public int maxSendSge;
    public int maxRecvSge;
    public int maxInlineData;

    /** Creates a capability request. */
    public QpCap(
            final int maxSendWr,
            final int maxRecvWr,
            final int maxSendSge,
            final int maxRecvSge,
            final int maxInlineData) {
        this.maxSendWr = maxSendWr;
        this.maxRecvWr = maxRecvWr;
        this.maxSendSge = maxSendSge;
        this.maxRecvSge = maxRecvSge;
        this.maxInlineData = maxInlineData;
    }

    /** Copy. */
    public QpCap copy() {
        return new QpCap(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData);
    }
}
