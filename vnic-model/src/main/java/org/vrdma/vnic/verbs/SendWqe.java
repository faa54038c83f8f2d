package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import org.vrdma.vnic.transport.PayloadSource;

/**
 * A posted send work request: the application's request copied at post time, its gather list
 * resolved to memory regions, and the requester's progress on it.
 */
final class SendWqe implements PayloadSource {
    long wrId;
    WrOpcode opcode;
    int sendFlags;
    boolean signaled;
    int immData;
    long remoteAddr;
    int rkey;
    long compareAdd;
    long swap;
    // LOCAL_INV, SEND_WITH_INV
    int invalidateRkey;
    // BIND_MW (rkey: the window's new rkey)
    MemoryWindow mw;
    MemoryRegion bindMr;
    long bindAddr;
    long bindLength;
    int bindAccess;
    // UD destination
    AhAttr ah;
    int remoteQpn;
    int remoteQkey;

    int numSge;
    final MemoryRegion[] mr;
    final long[] offset;
    final int[] length;
    final byte[] inline;
    boolean isInline;
    long totalLength;
    /** A local error found at post time, reported when the WQE reaches the wire, or null. */
    WcStatus localError;

    // Requester progress
    int firstPsn;
    int numPackets;
    /** READ: PSN of the next response expected. */
    int readNextPsn;
    /** READ/atomic: all response data arrived. */
    boolean responseDone;
    /** READ/atomic: PSN already re-requested in this round (-1 for none), so a gap is re-requested once. */
    int reRequestedPsn = -1;

    SendWqe(final int maxSge, final int maxInline) {
        mr = new MemoryRegion[maxSge];
        offset = new long[maxSge];
        length = new int[maxSge];
        inline = new byte[maxInline];
    }

    int lastPsn() {
        return (firstPsn + numPackets - 1) & 0xFFFFFF;
    }

    /** Appends {@code len} bytes of the message from {@code msgOffset} to {@code dst}. */
    @Override
    public void gather(long msgOffset, final ByteBuf dst, int len) {
        if (isInline) {
            dst.writeBytes(inline, (int) msgOffset, len);
            return;
        }
        for (int i = 0; i < numSge && len > 0; i++) {
            final int sl = length[i];
            if (msgOffset >= sl) {
                msgOffset -= sl;
                continue;
            }
            final int chunk = (int) Math.min(len, sl - msgOffset);
            mr[i].backing().read(offset[i] + msgOffset, dst, chunk);
            len -= chunk;
            msgOffset = 0;
        }
    }

    @Override
    public ByteBuf contiguousBuffer(long msgOffset, final int len) {
        if (isInline) {
            return null;
        }
        for (int i = 0; i < numSge; i++) {
            final int sl = length[i];
            if (msgOffset >= sl) {
                msgOffset -= sl;
                continue;
            }
            if (msgOffset + len > sl) {
                return null;
            }
            final ByteBuf b = mr[i].backing().buffer();
            return b != null && b.isDirect() && b.hasMemoryAddress() ? b : null;
        }
        return null;
    }

    @Override
    public int contiguousIndex(long msgOffset) {
        for (int i = 0; i < numSge; i++) {
            final int sl = length[i];
            if (msgOffset < sl) {
                return (int) (offset[i] + msgOffset);
            }
            msgOffset -= sl;
        }
        throw new IllegalArgumentException("offset " + msgOffset + " past the message");
    }

    /** Writes {@code len} bytes of {@code src} at {@code srcIndex} to message offset {@code msgOffset}. */
    void scatter(long msgOffset, final ByteBuf src, int srcIndex, int len) {
        Scatter.write(mr, offset, length, numSge, msgOffset, src, srcIndex, len);
    }
}
