package org.vrdma.verbs;

/**
 * The bounded scatter/gather list ({@code struct ibv_sge} array) a send or receive work request
 * carries, kept as parallel primitive arrays so refilling a reused request allocates nothing.
 */
final class SgeList {
    private final long[] addr;
    private final int[] length;
    private final int[] lkey;
    private int size;

    SgeList(int maxSge) {
        addr = new long[maxSge];
        length = new int[maxSge];
        lkey = new int[maxSge];
    }

    void clear() {
        size = 0;
    }

    /** @throws IbvInvalidArgumentException if the list has no room for another element */
    void add(long addr, int length, int lkey) {
        if (size == this.addr.length) {
            throw new IbvInvalidArgumentException("no room for another sge (" + this.addr.length + ")");
        }
        this.addr[size] = addr;
        this.length[size] = length;
        this.lkey[size] = lkey;
        size++;
    }

    int size() {
        return size;
    }

    long addr(int i) {
        return addr[i];
    }

    int length(int i) {
        return length[i];
    }

    int lkey(int i) {
        return lkey[i];
    }
}
