package org.vrdma.vnic.verbs;

/** A receive work request ({@code struct ibv_recv_wr}), reusable like {@link SendWorkRequest}. */
public final class RecvWorkRequest {
    public long wrId;

    private final long[] sgeAddr;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;

    /** A request with room for {@code maxSge} scatter elements. */
    public RecvWorkRequest(final int maxSge) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
    }

    /** A request with room for 16 scatter elements. */
    public RecvWorkRequest() {
        this(16);
    }

    /** Clears the scatter list. */
    public RecvWorkRequest reset() {
        numSge = 0;
        return this;
    }

    /** Appends a scatter element. */
    public RecvWorkRequest addSge(final long addr, final int length, final int lkey) {
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
