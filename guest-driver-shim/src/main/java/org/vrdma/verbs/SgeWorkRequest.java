package org.vrdma.verbs;

/**
 * The scatter/gather list ({@code struct ibv_sge} array) that send and receive work requests carry,
 * kept as parallel primitive arrays so refilling a reused request allocates nothing.
 *
 * @param <W> the request type, returned by the appending methods for chaining
 */
abstract sealed class SgeWorkRequest<W extends SgeWorkRequest<W>> permits IbvSendWr, IbvRecvWr {
    private final long[] sgeAddr;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;

    SgeWorkRequest(int maxSge) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
    }

    /** This request as its own type. */
    abstract W self();

    /** Empties the list. */
    final void clearSges() {
        numSge = 0;
    }

    /**
     * Appends a scatter/gather element ({@code struct ibv_sge}).
     *
     * @throws IbvInvalidArgumentException if the request has no room for another element
     */
    public final W addSge(long addr, int length, int lkey) {
        if (numSge == sgeAddr.length) {
            throw new IbvInvalidArgumentException("no room for another sge (" + sgeAddr.length + ")");
        }
        sgeAddr[numSge] = addr;
        sgeLength[numSge] = length;
        sgeLkey[numSge] = lkey;
        numSge++;
        return self();
    }

    /** Appends {@code [mr.addr() + offset, + length)} of {@code mr}. */
    public final W addSge(IbvMr mr, long offset, int length) {
        return addSge(mr.addr() + offset, length, mr.lkey());
    }

    /** Elements in the list. */
    public final int numSge() {
        return numSge;
    }

    /** Address of element {@code i}. */
    public final long sgeAddr(int i) {
        return sgeAddr[i];
    }

    /** Length of element {@code i}. */
    public final int sgeLength(int i) {
        return sgeLength[i];
    }

    /** Local key of element {@code i}. */
    public final int sgeLkey(int i) {
        return sgeLkey[i];
    }
}
