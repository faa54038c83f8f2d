package org.vrdma.harness.lab;

/** Dotted-quad IPv4 addresses and CIDR prefixes as big-endian ints. */
public final class Ipv4 {
    private Ipv4() {}

    /** "10.0.0.1" → 0x0A000001; IllegalArgumentException when it is not a dotted quad. */
    public static int parse(String text) {
        String[] parts = text.trim().split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: " + text);
        }
        int v = 0;
        for (String p : parts) {
            int b;
            try {
                b = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an IPv4 address: " + text, e);
            }
            if (b < 0 || b > 255 || p.isEmpty() || p.length() > 3) {
                throw new IllegalArgumentException("not an IPv4 address: " + text);
            }
            v = (v << 8) | b;
        }
        return v;
    }

    public static String format(int ip) {
        return (ip >>> 24) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF);
    }

    /** Prefix length of "a.b.c.d/n"; IllegalArgumentException when malformed. */
    public static int prefixLength(String cidr) {
        int slash = cidr.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("not a CIDR (a.b.c.d/n): " + cidr);
        }
        int n;
        try {
            n = Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a CIDR (a.b.c.d/n): " + cidr, e);
        }
        if (n < 8 || n > 30) {
            throw new IllegalArgumentException("prefix length must be 8..30: " + cidr);
        }
        parse(cidr.substring(0, slash));
        return n;
    }

    /** Network address of the prefix. */
    public static int parseCidrBase(String cidr) {
        int n = prefixLength(cidr);
        return parse(cidr.substring(0, cidr.indexOf('/'))) & mask(n);
    }

    public static boolean inCidr(int ip, String cidr) {
        int n = prefixLength(cidr);
        int base = parseCidrBase(cidr);
        int m = mask(n);
        // Neither the network nor the broadcast address.
        return (ip & m) == base && ip != base && ip != (base | ~m);
    }

    private static int mask(int n) {
        return n == 0 ? 0 : -1 << (32 - n);
    }
}
