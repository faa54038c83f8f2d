package org.vrdma.vswitch.pipeline;

/**
 * An underlay endpoint (IPv4 address and UDP port) packed into one {@code long}, so the pipeline
 * carries host addresses as primitives: bits 16..47 hold the IPv4 address (network order in the
 * int, 10.0.0.1 is 0x0A000001), bits 0..15 the port. {@link #NONE} (0) is no address.
 */
public final class UnderlayAddress {
    /** No address. */
    public static final long NONE = 0L;

    private UnderlayAddress() {}

    /** Packs an IPv4 address and a UDP port. */
    public static long of(int ipv4, int port) {
        return ((ipv4 & 0xFFFF_FFFFL) << 16) | (port & 0xFFFF);
    }

    /** Parses {@code "a.b.c.d:port"}. */
    public static long parse(String hostAndPort) {
        int colon = hostAndPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("expected a.b.c.d:port: " + hostAndPort);
        }
        int port = Integer.parseInt(hostAndPort.substring(colon + 1));
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("bad port: " + hostAndPort);
        }
        return of(parseIpv4(hostAndPort.substring(0, colon)), port);
    }

    public static int ipv4(long address) {
        return (int) (address >>> 16);
    }

    public static int port(long address) {
        return (int) (address & 0xFFFF);
    }

    /** Parses a dotted quad into the int form used across the project. */
    public static int parseIpv4(String dotted) {
        String[] parts = dotted.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: " + dotted);
        }
        int ip = 0;
        for (String part : parts) {
            int b = Integer.parseInt(part);
            if (b < 0 || b > 255) {
                throw new IllegalArgumentException("not an IPv4 address: " + dotted);
            }
            ip = (ip << 8) | b;
        }
        return ip;
    }

    public static String ipv4ToString(int ip) {
        return (ip >>> 24) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF);
    }

    public static String toString(long address) {
        return ipv4ToString(ipv4(address)) + ":" + port(address);
    }
}
