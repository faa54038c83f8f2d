package org.vrdma.control.model;

/**
 * One allow rule. {@code direction} is {@code ingress} or {@code egress}; {@code protocol} is
 * {@code all}, {@code tcp}, {@code udp}, {@code icmp} or {@code rdma} (RoCEv2, UDP 4791); {@code
 * cidr} is the remote block; ports apply to tcp and udp only.
 */
public record SecurityGroupRule(
        String id, String direction, String protocol, String cidr, Integer fromPort, Integer toPort) {}
