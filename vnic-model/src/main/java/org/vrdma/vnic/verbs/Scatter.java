package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;

/**
 * Writes a message's bytes into a resolved scatter list (memory region, offset and length per
 * element): the one walk that RECV placement and READ responses share.
 */
final class Scatter {
    private Scatter() {}

    /** Writes {@code len} bytes of {@code src} from {@code srcIndex} at message offset {@code msgOffset}. */
    static void write(
            final MemoryRegion[] mr,
            final long[] offset,
            final int[] length,
            final int numSge,
            long msgOffset,
            final ByteBuf src,
            int srcIndex,
            int len) {
        for (int i = 0; i < numSge && len > 0; i++) {
            final int sl = length[i];
            if (msgOffset >= sl) {
                msgOffset -= sl;
                continue;
            }
            final int chunk = (int) Math.min(len, sl - msgOffset);
            mr[i].backing().write(offset[i] + msgOffset, src, srcIndex, chunk);
            srcIndex += chunk;
            len -= chunk;
            msgOffset = 0;
        }
    }

    /** The same for a byte array source. */
    static void write(
            final MemoryRegion[] mr,
            final long[] offset,
            final int[] length,
            final int numSge,
            long msgOffset,
            final byte[] src,
            int srcIndex,
            int len) {
        for (int i = 0; i < numSge && len > 0; i++) {
            final int sl = length[i];
            if (msgOffset >= sl) {
                msgOffset -= sl;
                continue;
            }
            final int chunk = (int) Math.min(len, sl - msgOffset);
            mr[i].backing().write(offset[i] + msgOffset, src, srcIndex, chunk);
            srcIndex += chunk;
            len -= chunk;
            msgOffset = 0;
        }
    }
}
