package org.vrdma.vswitch.pipeline;

/**
 * Why the vSwitch (or a fabric switch) dropped a packet. Every drop is counted under exactly one
 * reason, per switch and, where known, per ENI and per VPC; nothing on the data path throws.
 */
public enum DropReason {
    /** A frame from an ENI id that is not attached. */
    UNKNOWN_ENI,
    /** The inner frame is not IPv4 (IPv6, VLAN-tagged, other ethertypes): the overlay carries IPv4 only. */
    NOT_IPV4,
    /** Inner Ethernet/IPv4 header truncated, inconsistent, with a bad checksum, or a fragment. */
    MALFORMED_INNER,
    /** Inner source MAC or IPv4 address is not the sending ENI's. */
    SPOOFED_SOURCE,
    /** RoCEv2 (UDP 4791) to or from an ENI whose vRDMA is off. */
    RDMA_DISABLED,
    /** A security-group rule (or the default action) denied the packet. */
    SECURITY_GROUP_DENY,
    /** No route for the inner destination in the packet's VPC. */
    NO_ROUTE,
    /** The QoS class queue was full (or the class polices and the packet did not conform). */
    QOS_QUEUE_FULL,
    /** Geneve header truncated, wrong version, bad options or not an Ethernet payload. */
    MALFORMED_GENEVE,
    /** A critical Geneve option this switch does not know (RFC 8926 says drop). */
    UNKNOWN_CRITICAL_OPTION,
    /** Underlay datagram from an address that is not a known host. */
    UNKNOWN_SOURCE_HOST,
    /** No local ENI in the VNI the datagram carries. */
    UNKNOWN_VNI,
    /** Known host, known VNI, but the inner source address does not live on that host in that VPC. */
    SOURCE_HOST_MISMATCH,
    /** Egress buffer full (tail drop). */
    BUFFER_FULL,
    /** Injected loss (random or burst) on an egress port. */
    INJECTED_LOSS,
    /** A queued packet whose ENI was removed, or a port that was closed. */
    PORT_REMOVED,
    /**
     * An ARP request for an address with no route in the asking ENI's VPC: the switch answers only
     * for addresses it routes in that VPC, so nothing is learnt about other VPCs.
     */
    ARP_NO_ROUTE,
    /** ARP the switch does not answer: replies, gratuitous announcements, probes for the ENI's own address. */
    ARP_IGNORED;

    private static final DropReason[] VALUES = values();

    /** Number of reasons, for counter arrays indexed by ordinal. */
    public static final int COUNT = VALUES.length;

    public static DropReason of(int ordinal) {
        return VALUES[ordinal];
    }
}
