package org.vrdma.verbs;

import org.vrdma.vnic.verbs.WrOpcode;

/**
 * A send work request ({@code struct ibv_send_wr}), reusable: {@link IbvQp#postSend} copies what it
 * needs, so an application keeps one instance per outstanding pattern and refills it.
 *
 * <p>Scatter/gather elements name native addresses inside registered regions ({@code mr.addr() +
 * offset}) with the region's lkey. With {@link org.vrdma.vnic.verbs.SendFlags#INLINE} the bytes are
 * copied when the request is posted, so the buffer may be reused at once; the lkey is still used to
 * find the memory, so inline elements too must lie inside a region registered in the same context.
 */
public final class IbvSendWr {
    /** Returned in the completion. */
    public long wrId;
    /** The operation. */
    public WrOpcode opcode = WrOpcode.SEND;
    /** {@link org.vrdma.vnic.verbs.SendFlags} bits: SIGNALED, SOLICITED, INLINE, FENCE. */
    public int sendFlags;
    /** Immediate data (host order) of SEND_WITH_IMM and RDMA_WRITE_WITH_IMM. */
    public int immData;
    /** RDMA and atomics: the peer's address. */
    public long remoteAddr;
    /** RDMA and atomics: the peer's rkey. */
    public int rkey;
    /** Atomics: the compare value (CAS) or the addend (FETCH_ADD). */
    public long compareAdd;
    /** Atomics: the swap value (CAS). */
    public long swap;
    /** UD: the address handle of the destination. */
    public IbvAh ah;
    /** UD: the destination QP number. */
    public int remoteQpn;
    /** UD: the destination Q_Key; a value with the high bit set means the QP's own Q_Key. */
    public int remoteQkey;

    private final SgeList sges;

    /** A request with room for {@code maxSge} scatter/gather elements. */
    public IbvSendWr(int maxSge) {
        sges = new SgeList(maxSge);
    }

    /** A request with room for 16 scatter/gather elements. */
    public IbvSendWr() {
        this(16);
    }

    /** Clears the scatter/gather list, the flags and the address handle. */
    public IbvSendWr reset() {
        sges.clear();
        sendFlags = 0;
        ah = null;
        return this;
    }

    /**
     * Appends a scatter/gather element ({@code struct ibv_sge}).
     *
     * @throws IbvInvalidArgumentException if the request has no room for another element
     */
    public IbvSendWr addSge(long addr, int length, int lkey) {
        sges.add(addr, length, lkey);
        return this;
    }

    /** Appends {@code [mr.addr() + offset, + length)} of {@code mr}. */
    public IbvSendWr addSge(IbvMr mr, long offset, int length) {
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
