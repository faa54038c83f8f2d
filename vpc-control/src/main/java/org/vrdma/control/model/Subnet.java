package org.vrdma.control.model;

/** A block of a VPC's CIDR from which ENIs take their addresses; its first address is the gateway. */
public record Subnet(String id, String name, String vpcId, String cidr, String gatewayIp, long version) {}
