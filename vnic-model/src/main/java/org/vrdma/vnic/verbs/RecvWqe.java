package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;

/** A posted receive, with its scatter list resolved to memory regions at post time. */
final class RecvWqe {
    long wrId;
    int numSge;
    final MemoryRegion[] mr;
    final long[] offset;
    final int[] length;
    long totalLength;
    /**
     * LOC_PROT_ERR if an element did not resolve to local-writable memory of the QP's domain; checked
     * by the messages that scatter into the receive (SENDs), not by a WRITE with immediate.
     */
    boolean protectionError;

    RecvWqe(final int maxSge) {
        mr = new MemoryRegion[maxSge];
        offset = new long[maxSge];
        length = new int[maxSge];
    }

    void resolve(final RecvWorkRequest wr, final ProtectionDomain pd, final Device device) {
        wrId = wr.wrId;
        numSge = wr.numSge();
        totalLength = 0;
        protectionError = false;
        for (int i = 0; i < numSge; i++) {
            final MemoryRegion m = device.lookupMr(wr.sgeLkey(i));
            final long addr = wr.sgeAddr(i);
            final int len = wr.sgeLength(i);
            if (m == null
                    || m.pd() != pd
                    || !AccessFlags.has(m.access(), AccessFlags.LOCAL_WRITE)
                    || !m.contains(addr, len)) {
                protectionError = true;
                mr[i] = null;
                offset[i] = 0;
            } else {
                mr[i] = m;
                offset[i] = addr - m.addr();
            }
            length[i] = len;
            totalLength += len;
        }
    }

    void copyFrom(final RecvWqe o) {
        wrId = o.wrId;
        numSge = o.numSge;
        totalLength = o.totalLength;
        protectionError = o.protectionError;
        System.arraycopy(o.mr, 0, mr, 0, o.numSge);
        System.arraycopy(o.offset, 0, offset, 0, o.numSge);
        System.arraycopy(o.length, 0, length, 0, o.numSge);
    }

    /** Writes {@code len} bytes of {@code src} from {@code srcIndex} at message offset {@code msgOffset}. */
    void scatter(long msgOffset, final ByteBuf src, int srcIndex, int len) {
        Scatter.write(mr, offset, length, numSge, msgOffset, src, srcIndex, len);
    }

    /** Writes {@code len} bytes of {@code src} from {@code srcIndex} at message offset {@code msgOffset}. */
    void scatter(long msgOffset, final byte[] src, int srcIndex, int len) {
        Scatter.write(mr, offset, length, numSge, msgOffset, src, srcIndex, len);
    }
}
