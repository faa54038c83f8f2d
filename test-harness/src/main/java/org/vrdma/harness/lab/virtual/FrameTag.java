package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import org.vrdma.vswitch.pipeline.InnerFrame;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.vswitch.wire.GeneveHeader;
import org.vrdma.wire.Ipv4UdpHeaders;

/**
 * What the fabric needs to know of an underlay frame, read from its headers once, where it enters
 * the fabric, and carried beside it from hop to hop in one {@code long}: its length, the ECMP key
 * (destination host, outer UDP source port) and the inner IPv4 facts an egress port acts on (ECN
 * field, whether it is a control packet, where the IPv4 header is). Switches and ports then route,
 * admit, mark and count without touching the frame's memory, which has long left the CPU caches
 * after waiting in queues; only marking CE (and INT stamping) writes to the frame.
 *
 * <p>Bits: 0-16 length, 17 inner IPv4, 18 control, 19-20 ECN, 21-29 IPv4 header offset from the
 * reader index, 30-33 IPv4 header words, 34-49 outer UDP source port, 50-63 destination host.
 */
final class FrameTag {
    /** A frame whose tag has not been read yet. */
    static final long UNTAGGED = -1L;
    /** A frame that is not a routable underlay frame (dropped as malformed). */
    static final long MALFORMED = -2L;
    /** Hosts a tag can address (indices 0 .. MAX_HOSTS - 1; the all-ones index is never used). */
    static final int MAX_HOSTS = (1 << 14) - 1;

    private static final int MAX_BYTES = (1 << 17) - 1;

    private FrameTag() {}

    /**
     * Reads the tag of an underlay frame whose destination is host {@code outer dst - hostBaseIpv4}.
     * {@code peek} is scratch space.
     */
    static long read(ByteBuf frame, int hostBaseIpv4, InnerFrame peek) {
        int start = frame.readerIndex();
        int end = frame.writerIndex();
        int bytes = end - start;
        if (bytes < UnderlayPort.OUTER_HEADERS_BYTES
                || bytes > MAX_BYTES
                || frame.getUnsignedShort(start + 12) != 0x0800) {
            return MALFORMED;
        }
        long host = frame.getInt(start + 30) - (long) hostBaseIpv4;
        if (host < 0 || host >= MAX_HOSTS) {
            host = MAX_HOSTS; // routes nowhere
        }
        long sourcePort = frame.getUnsignedShort(start + 34);
        long tag = bytes | sourcePort << 34 | host << 50;
        int g = start + UnderlayPort.OUTER_HEADERS_BYTES;
        if (end - g < GeneveHeader.BASE_HEADER_BYTES) {
            return tag;
        }
        int inner = g + GeneveHeader.BASE_HEADER_BYTES + (frame.getUnsignedByte(g) & 0x3F) * 4;
        if (!peek.peek(frame, inner, end)) {
            return tag;
        }
        tag |= 1L << 17;
        if (peek.isControl()) {
            tag |= 1L << 18;
        }
        return tag
                | (long) peek.ecn << 19
                | (long) (peek.ipOffset - start) << 21
                | (long) (peek.ipHeaderBytes >>> 2) << 30;
    }

    static int bytes(long tag) {
        return (int) (tag & MAX_BYTES);
    }

    static int host(long tag) {
        return (int) (tag >>> 50);
    }

    static int sourcePort(long tag) {
        return (int) (tag >>> 34) & 0xFFFF;
    }

    static boolean ip(long tag) {
        return (tag & 1L << 17) != 0;
    }

    static boolean control(long tag) {
        return (tag & 1L << 18) != 0;
    }

    static int ecn(long tag) {
        return (int) (tag >>> 19) & 3;
    }

    static boolean ecnCapable(long tag) {
        return ip(tag) && ecn(tag) != Ipv4UdpHeaders.NOT_ECT;
    }

    static int ipOffset(long tag) {
        return (int) (tag >>> 21) & 0x1FF;
    }

    static int ipHeaderBytes(long tag) {
        return ((int) (tag >>> 30) & 0xF) << 2;
    }

    /**
     * False when the frame surely carries no Geneve option (its inner Ethernet header, without a
     * VLAN tag, follows the Geneve base header), so no INT record needs looking for.
     */
    static boolean mayCarryOptions(long tag) {
        return !ip(tag) || ipOffset(tag) != UnderlayPort.OUTER_HEADERS_BYTES + GeneveHeader.BASE_HEADER_BYTES + 14;
    }

    /** The tag after the frame's ECN field was set to CE. */
    static long withCe(long tag) {
        return tag | (long) Ipv4UdpHeaders.CE << 19;
    }
}
