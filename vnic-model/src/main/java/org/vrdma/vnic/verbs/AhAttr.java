package org.vrdma.vnic.verbs;

/**
 * Address vector ({@code struct ibv_ah_attr}) for RoCEv2 over IPv4: where packets go on the ENI's
 * network. The destination GID of libibverbs is an IPv4-mapped address here.
 *
 * @param destIpv4 destination IPv4 address, as a big-endian int
 * @param destMac destination MAC (low 48 bits), the next hop on the ENI's subnet
 * @param trafficClass DSCP and ECN byte template (ECN bits are set by the transport)
 * @param portNum port, always 1
 */
public record AhAttr(int destIpv4, long destMac, int trafficClass, int portNum) {
    /** An address vector on port 1 with traffic class 0. */
    public static AhAttr of(final int destIpv4, final long destMac) {
        return new AhAttr(destIpv4, destMac, 0, 1);
    }
}
