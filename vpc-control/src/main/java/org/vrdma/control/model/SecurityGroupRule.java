package org.vrdma.control.model;

/**
 * One rule. {@code direction} is {@code ingress} or {@code egress}; {@code protocol} is {@code all},
 * {@code tcp}, {@code udp}, {@code icmp} or {@code rdma} (RoCEv2, UDP 4791); {@code cidr} is the
 * remote block; ports apply to tcp and udp only; {@code action} is {@code allow} or {@code deny}
 * (null, in records stored before rules had an action, means allow). Deny rules of an ENI's groups
 * are checked before its allow rules.
 */
public record SecurityGroupRule(
        String id, String direction, String protocol, String cidr, Integer fromPort, Integer toPort, String action) {
    public static final String ALLOW = "allow";
    public static final String DENY = "deny";

    public SecurityGroupRule(
            String id, String direction, String protocol, String cidr, Integer fromPort, Integer toPort) {
        this(id, direction, protocol, cidr, fromPort, toPort, ALLOW);
    }

    /** Whether the rule denies what it matches. */
    public boolean denies() {
        return DENY.equals(action);
    }
}
