package org.vrdma.control.model;

/** IPv4 addresses as unsigned 32-bit values in a {@code long}, and CIDR blocks over them. */
public final class Ipv4 {
    private Ipv4() {}

    /** Parses a dotted quad, or throws {@link IllegalArgumentException} saying why not. */
    public static long parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("missing IPv4 address");
        }
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv4 address (a.b.c.d)");
        }
        long value = 0;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address (a.b.c.d)");
            }
            int octet = Integer.parseInt(part);
            if (octet > 255 || (part.length() > 1 && part.charAt(0) == '0')) {
                throw new IllegalArgumentException("'" + text + "' is not an IPv4 address (a.b.c.d)");
            }
            value = (value << 8) | octet;
        }
        return value;
    }

    public static String format(long address) {
        return ((address >>> 24) & 0xff) + "." + ((address >>> 16) & 0xff) + "." + ((address >>> 8) & 0xff) + "."
                + (address & 0xff);
    }

    /** A CIDR block: {@code network} has no bits set below the prefix. */
    public record Cidr(long network, int prefix) {
        public Cidr {
            if (prefix < 0 || prefix > 32) {
                throw new IllegalArgumentException("prefix length " + prefix + " is outside 0..32");
            }
            if ((network & ~mask(prefix) & 0xffffffffL) != 0) {
                throw new IllegalArgumentException(format(network) + "/" + prefix
                        + " has host bits set; the network is " + format(network & mask(prefix)) + "/" + prefix);
            }
        }

        public static Cidr parse(String text) {
            if (text == null) {
                throw new IllegalArgumentException("missing CIDR block");
            }
            int slash = text.indexOf('/');
            if (slash < 0) {
                throw new IllegalArgumentException("'" + text + "' is not a CIDR block (a.b.c.d/len)");
            }
            String len = text.substring(slash + 1);
            if (len.isEmpty() || len.length() > 2 || !len.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("'" + text + "' is not a CIDR block (a.b.c.d/len)");
            }
            return new Cidr(Ipv4.parse(text.substring(0, slash)), Integer.parseInt(len));
        }

        static long mask(int prefix) {
            return prefix == 0 ? 0 : (0xffffffffL << (32 - prefix)) & 0xffffffffL;
        }

        public long size() {
            return 1L << (32 - prefix);
        }

        public long first() {
            return network;
        }

        public long last() {
            return network + size() - 1;
        }

        public boolean contains(long address) {
            return address >= first() && address <= last();
        }

        public boolean contains(Cidr other) {
            return other.first() >= first() && other.last() <= last();
        }

        public boolean overlaps(Cidr other) {
            return first() <= other.last() && other.first() <= last();
        }

        /** The gateway address of a subnet: the first one after the network address. */
        public long gateway() {
            return network + 1;
        }

        /** Whether an ENI may use the address: inside, and not network, gateway or broadcast. */
        public boolean assignable(long address) {
            return contains(address) && address != first() && address != gateway() && address != last();
        }

        @Override
        public String toString() {
            return format(network) + "/" + prefix;
        }
    }
}
