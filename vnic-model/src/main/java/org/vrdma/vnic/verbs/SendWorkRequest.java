package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;

/**
 * A send work request ({@code struct ibv_send_wr}), reusable: the queue pair copies what it needs
 * at post time, so applications keep one instance and refill it.
 */
public final class SendWorkRequest {
    public long wrId;
    public WrOpcode opcode = WrOpcode.SEND;
    /** {@link SendFlags} bits. */
    public int sendFlags;
    /** Immediate data (host order) for the *_WITH_IMM opcodes. */
    public int immData;

    /** RDMA: remote virtual address and key (READ, WRITE, atomics). */
    public long remoteAddr;

    public int rkey;
    /** Atomics: compare value (CAS) or addend (FAA). */
    public long compareAdd;
    /** Atomics: swap value (CAS). */
    public long swap;

    /** LOCAL_INV and SEND_WITH_INV: the rkey to invalidate ({@code invalidate_rkey}). */
    public int invalidateRkey;

    /** BIND_MW: the type 2 window; {@link #rkey} is the rkey it gets ({@code bind_mw.rkey}). */
    public MemoryWindow mw;
    /** BIND_MW: the region, range and {@link AccessFlags} of the binding ({@code bind_info}). */
    public MemoryRegion bindMr;

    public long bindAddr;
    public long bindLength;
    public int bindAccess;

    /** UD: destination. */
    public AddressHandle ah;

    public int remoteQpn;
    public int remoteQkey;

    /** With {@link SendFlags#INLINE}: the payload (readable bytes), copied at post; not released. */
    public ByteBuf inlineData;

    private final long[] sgeAddr;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;

    /** A request with room for {@code maxSge} scatter/gather elements. */
    public SendWorkRequest(final int maxSge) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
    }

    /** A request with room for 16 scatter/gather elements. */
    public SendWorkRequest() {
        this(16);
    }

    /** Clears the scatter/gather list, flags and inline data. */
    public SendWorkRequest reset() {
        numSge = 0;
        sendFlags = 0;
        inlineData = null;
        ah = null;
        mw = null;
        bindMr = null;
        return this;
    }

    /** Appends a scatter/gather element ({@code struct ibv_sge}). */
    public SendWorkRequest addSge(final long addr, final int length, final int lkey) {
        sgeAddr[numSge] = addr;
        sgeLength[numSge] = length;
        sgeLkey[numSge] = lkey;
        numSge++;
        return this;
    }

    public int numSge() {
        return numSge;
    }

    public long sgeAddr(final int i) {
        return sgeAddr[i];
    }

    public int sgeLength(final int i) {
        return sgeLength[i];
    }

    public int sgeLkey(final int i) {
        return sgeLkey[i];
    }
}
