package org.vrdma.verbs;

/**
 * A receive work request ({@code struct ibv_recv_wr}), reusable like {@link IbvSendWr}: the buffers
 * its scatter elements name receive the next incoming SEND (and, on UD, a 40-byte GRH first).
 */
public final class IbvRecvWr extends SgeWorkRequest<IbvRecvWr> {
    /** Returned in the completion. */
    public long wrId;

    /** A request with room for {@code maxSge} scatter elements. */
    public IbvRecvWr(int maxSge) {
        super(maxSge);
    }

    /** A request with room for 16 scatter elements. */
    public IbvRecvWr() {
        this(16);
    }

    /** Clears the scatter list. */
    public IbvRecvWr reset() {
        clearSges();
        return this;
    }

    @Override
    IbvRecvWr self() {
        return this;
    }
}
