package org.vrdma.verbs;

/**
 * A receive work request ({@code struct ibv_recv_wr}), reusable like {@link IbvSendWr}: the buffers
 * its scatter elements name receive the next incoming SEND (and, on UD, a 40-byte GRH first).
 */
public final class IbvRecvWr {
    /** Returned in the completion. */
    public long wrId;

    private final SgeList sges;

    /** A request with room for {@code maxSge} scatter elements. */
    public IbvRecvWr(int maxSge) {
        sges = new SgeList(maxSge);
    }

    /** A request with room for 16 scatter elements. */
    public IbvRecvWr() {
        this(16);
    }

    /** Clears the scatter list. */
    public IbvRecvWr reset() {
        sges.clear();
        return this;
    }

    /**
     * Appends a scatter element.
     *
     * @throws IbvInvalidArgumentException if the request has no room for another element
     */
    public IbvRecvWr addSge(long addr, int length, int lkey) {
        sges.add(addr, length, lkey);
        return this;
    }

    /** Appends {@code [mr.addr() + offset, + length)} of {@code mr}. */
    public IbvRecvWr addSge(IbvMr mr, long offset, int length) {
        return addSge(mr.addr() + offset, length, mr.lkey());
    }

    /** Elements in the list. */
    public int numSge() {
        return sges.size();
    }

    /** Address of element {@code i}. */
    public long sgeAddr(int i) {
        return sges.addr(i);
    }

    /** Length of element {@code i}. */
    public int sgeLength(int i) {
        return sges.length(i);
    }

    /** Local key of element {@code i}. */
    public int sgeLkey(int i) {
        return sges.lkey(i);
    }
}
