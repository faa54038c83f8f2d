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
public final class IbvSendWr extends SgeWorkRequest<IbvSendWr> {
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
    /** LOCAL_INV and SEND_WITH_INV: the rkey to invalidate ({@code invalidate_rkey}). */
    public int invalidateRkey;
    /** BIND_MW: the type 2 window; {@link #rkey} is the rkey it gets ({@code bind_mw.rkey}). */
    public IbvMw mw;
    /** BIND_MW: the region ({@code bind_info.mr}; null with length 0 only), range and access. */
    public IbvMr bindMr;

    public long bindAddr;
    public long bindLength;
    /** BIND_MW: the {@link org.vrdma.vnic.verbs.AccessFlags} the window grants (REMOTE_* only). */
    public int bindAccess;
    /** Set by {@link IbvQp#bindMw}: the request binds a type 1 window. */
    boolean type1Bind;

    /** UD: the address handle of the destination. */
    public IbvAh ah;
    /** UD: the destination QP number. */
    public int remoteQpn;
    /** UD: the destination Q_Key; a value with the high bit set means the QP's own Q_Key. */
    public int remoteQkey;

    /** A request with room for {@code maxSge} scatter/gather elements. */
    public IbvSendWr(int maxSge) {
        super(maxSge);
    }

    /** A request with room for 16 scatter/gather elements. */
    public IbvSendWr() {
        this(16);
    }

    /** Clears the scatter/gather list, the flags and the address handle. */
    public IbvSendWr reset() {
        clearSges();
        sendFlags = 0;
        ah = null;
        mw = null;
        bindMr = null;
        return this;
    }

    @Override
    IbvSendWr self() {
        return this;
    }
}
