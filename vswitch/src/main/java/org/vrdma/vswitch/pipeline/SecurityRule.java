package org.vrdma.vswitch.pipeline;

/**
 * One stateless security-group rule: a packet matches when its protocol, its destination port and
 * the remote address (destination on egress, source on ingress) all match.
 *
 * @param allow true to allow matching packets, false to deny them
 * @param protocol IP protocol number, or {@link #ANY_PROTOCOL}
 * @param fromPort first destination port (inclusive); ignored for protocols without ports
 * @param toPort last destination port (inclusive)
 * @param cidrIpv4 network address of the remote CIDR
 * @param prefixLength 0..32; 0 matches every address
 */
public record SecurityRule(boolean allow, int protocol, int fromPort, int toPort, int cidrIpv4, int prefixLength) {
    public static final int ANY_PROTOCOL = -1;

    public SecurityRule {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("prefix length " + prefixLength);
        }
        if (fromPort < 0 || toPort > 0xFFFF || fromPort > toPort) {
            throw new IllegalArgumentException("port range " + fromPort + ".." + toPort);
        }
    }

    /** Allows {@code protocol} to ports {@code from..to} of remote addresses in {@code cidr} ("10.0.0.0/8"). */
    public static SecurityRule allow(int protocol, int fromPort, int toPort, String cidr) {
        return of(true, protocol, fromPort, toPort, cidr);
    }

    public static SecurityRule deny(int protocol, int fromPort, int toPort, String cidr) {
        return of(false, protocol, fromPort, toPort, cidr);
    }

    /** Allows everything from/to {@code cidr}. */
    public static SecurityRule allowAll(String cidr) {
        return of(true, ANY_PROTOCOL, 0, 0xFFFF, cidr);
    }

    private static SecurityRule of(boolean allow, int protocol, int fromPort, int toPort, String cidr) {
        int slash = cidr.indexOf('/');
        int ip = UnderlayAddress.parseIpv4(slash < 0 ? cidr : cidr.substring(0, slash));
        int prefix = slash < 0 ? 32 : Integer.parseInt(cidr.substring(slash + 1));
        return new SecurityRule(allow, protocol, fromPort, toPort, ip, prefix);
    }

    /** Whether a packet of {@code protocol} to {@code dstPort} with this remote address matches. */
    public boolean matches(int packetProtocol, int dstPort, int remoteIpv4) {
        if (protocol != ANY_PROTOCOL && protocol != packetProtocol) {
            return false;
        }
        boolean hasPorts = packetProtocol == InnerFrame.PROTOCOL_TCP || packetProtocol == InnerFrame.PROTOCOL_UDP;
        if (hasPorts && (dstPort < fromPort || dstPort > toPort)) {
            return false;
        }
        int mask = prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
        return (remoteIpv4 & mask) == (cidrIpv4 & mask);
    }
}
