package org.vrdma.wire;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * The RoCEv2 invariant CRC (IBA annex A17) over IPv4: CRC-32 (the Ethernet polynomial) of 8 bytes
 * of 0xFF standing in for the InfiniBand LRH, then the IPv4 header, the UDP header, the BTH and
 * everything after it up to the ICRC, with the fields a network may change masked to all ones:
 * IPv4 type of service (DSCP and ECN), TTL and header checksum, UDP checksum, and BTH byte 4 (FECN,
 * BECN and reserved bits). The 32-bit result is stored little-endian in the last four bytes of the
 * packet, as Linux rxe and RoCE NICs do.
 *
 * <p>One instance per thread: it keeps a {@link CRC32} and a scratch buffer so that computing
 * allocates nothing. On a direct buffer it reads through Netty's cached internal NIO view, so the
 * same buffer must not be checksummed by two threads at once.
 */
public final class Icrc {
    public static final int ICRC_BYTES = 4;

    private static final byte[] MASKED_LRH = {-1, -1, -1, -1, -1, -1, -1, -1};
    private static final int MAX_IPV4_HEADER_BYTES = 60;
    private static final int BTH_BYTES = RoceCodec.BTH_BYTES;
    private static final int CHUNK_BYTES = 256;

    /** Views of pooled memory chunks this instance has seen, by base address (see {@link #update}). */
    private static final int CHUNK_VIEWS = 16;
    /** Without {@code sun.misc.Unsafe}, Netty's {@code memoryAddress()} itself allocates. */
    private static final boolean HAS_UNSAFE = PlatformDependent.hasUnsafe();

    private final CRC32 crc = new CRC32();
    private final ByteBuffer[] chunkViews = new ByteBuffer[CHUNK_VIEWS];
    private final long[] chunkBase = new long[CHUNK_VIEWS];
    private final long[] chunkEnd = new long[CHUNK_VIEWS];
    private int chunkViewsUsed;
    private int nextVictim;
    // Masked copy of IPv4 + UDP + BTH; also the bounce buffer for buffers without a single NIO view.
    private final byte[] scratch =
            new byte[Math.max(MAX_IPV4_HEADER_BYTES + Ipv4UdpCodec.UDP_HEADER_BYTES + BTH_BYTES, CHUNK_BYTES)];

    /**
     * Computes the ICRC of a RoCEv2 packet.
     *
     * @param packet the buffer; not modified, indexes not moved
     * @param ipOffset absolute index of the IPv4 header
     * @param ipHeaderBytes IPv4 header length (20 to 60, a multiple of 4)
     * @param udpBytes UDP length (header, BTH, rest and ICRC); at least 8 + 12 + 4
     * @return the CRC; store with {@code writeIntLE}
     */
    public int compute(ByteBuf packet, int ipOffset, int ipHeaderBytes, int udpBytes) {
        return compute(packet, ipOffset, ipHeaderBytes, udpBytes, 0, 0, null, 0);
    }

    /**
     * Computes the ICRC of a RoCEv2 packet whose bytes {@code [holeIndex, holeIndex + holeBytes)}
     * (after the BTH) are not in {@code packet} but at {@code payloadIndex} of {@code payload}: a
     * frame whose payload is gathered from the memory region when it is sent.
     */
    public int compute(
            ByteBuf packet,
            int ipOffset,
            int ipHeaderBytes,
            int udpBytes,
            int holeIndex,
            int holeBytes,
            ByteBuf payload,
            int payloadIndex) {
        int pseudoBytes = ipHeaderBytes + Ipv4UdpCodec.UDP_HEADER_BYTES + BTH_BYTES;
        // Int by int: a bulk getBytes from a direct buffer may allocate a ByteBuffer duplicate.
        for (int i = 0; i < pseudoBytes; i += 4) {
            int v = packet.getInt(ipOffset + i);
            scratch[i] = (byte) (v >>> 24);
            scratch[i + 1] = (byte) (v >>> 16);
            scratch[i + 2] = (byte) (v >>> 8);
            scratch[i + 3] = (byte) v;
        }
        scratch[1] = -1; // type of service: DSCP and ECN
        scratch[8] = -1; // TTL
        scratch[10] = -1; // header checksum
        scratch[11] = -1;
        int udp = ipHeaderBytes;
        scratch[udp + 6] = -1; // UDP checksum
        scratch[udp + 7] = -1;
        scratch[udp + Ipv4UdpCodec.UDP_HEADER_BYTES + 4] = -1; // BTH FECN, BECN, resv6

        crc.reset();
        crc.update(MASKED_LRH, 0, MASKED_LRH.length);
        crc.update(scratch, 0, pseudoBytes);
        int restBytes = udpBytes - Ipv4UdpCodec.UDP_HEADER_BYTES - BTH_BYTES - ICRC_BYTES;
        int restIndex = ipOffset + pseudoBytes;
        if (holeBytes > 0) {
            update(packet, restIndex, holeIndex - restIndex);
            update(payload, payloadIndex, holeBytes);
            restBytes -= holeIndex + holeBytes - restIndex;
            restIndex = holeIndex + holeBytes;
        }
        update(packet, restIndex, restBytes);
        return (int) crc.getValue();
    }

    /**
     * Runs the CRC intrinsic on direct memory without a {@code ByteBuffer} per packet: Netty's
     * per-buffer NIO views are duplicates (or slices) created anew for every pooled buffer, a few
     * dozen bytes of garbage per packet. Pooled buffers are windows of a few large chunks, so this
     * keeps one view per chunk, found by address, and only moves its position and limit. The view
     * is only ever read inside the range of the buffer being checksummed, which is live memory.
     */
    private boolean updateThroughChunkView(ByteBuf buf, int index, int lengthBytes) {
        long start = buf.memoryAddress() + index;
        long end = start + lengthBytes;
        for (int i = 0; i < chunkViewsUsed; i++) {
            if (start >= chunkBase[i] && end <= chunkEnd[i]) {
                ByteBuffer v = chunkViews[i];
                int from = (int) (start - chunkBase[i]);
                v.limit(from + lengthBytes).position(from);
                try {
                    crc.update(v);
                    return true;
                } catch (IllegalStateException e) {
                    // A view of memory whose scope was closed (an unmapped region whose addresses
                    // were mapped again): forgotten; a view of the live buffer replaces it below.
                    chunkBase[i] = 0;
                    chunkEnd[i] = 0;
                    break;
                }
            }
        }
        // First packet from this chunk: the root buffer's NIO view spans its whole chunk (pooled)
        // or the buffer itself (unpooled); keep a duplicate of it, once per chunk.
        ByteBuf root = buf;
        while (root.unwrap() != null) {
            root = root.unwrap();
        }
        if (!root.isDirect() || root.nioBufferCount() != 1 || root.capacity() == 0) {
            return false;
        }
        ByteBuffer view = root.internalNioBuffer(0, root.capacity()).duplicate();
        long base = PlatformDependent.directBufferAddress(view);
        long viewEnd = base + view.capacity();
        if (start < base || end > viewEnd) {
            return false;
        }
        int slot = chunkViewsUsed < CHUNK_VIEWS ? chunkViewsUsed++ : (nextVictim++ & (CHUNK_VIEWS - 1));
        chunkViews[slot] = view;
        chunkBase[slot] = base;
        chunkEnd[slot] = viewEnd;
        int from = (int) (start - base);
        view.limit(from + lengthBytes).position(from);
        crc.update(view);
        return true;
    }

    private void update(ByteBuf buf, int index, int lengthBytes) {
        if (lengthBytes <= 0) {
            return;
        }
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, lengthBytes);
        } else if (HAS_UNSAFE && buf.hasMemoryAddress() && updateThroughChunkView(buf, index, lengthBytes)) {
            return;
        } else if (buf.isDirect() && buf.nioBufferCount() == 1) {
            // A view Netty caches per buffer: the intrinsic runs on the direct memory, no copy.
            ByteBuffer view = buf.internalNioBuffer(index, lengthBytes);
            crc.update(view);
        } else {
            // Composite buffers: bounce through the scratch array in small chunks.
            for (int done = 0; done < lengthBytes; ) {
                int n = Math.min(CHUNK_BYTES, lengthBytes - done);
                buf.getBytes(index + done, scratch, 0, n);
                crc.update(scratch, 0, n);
                done += n;
            }
        }
    }
}
