package org.vrdma.control.agent;

/** A VPC a host carries traffic for: its overlay VNI and address space. */
public record VpcConfig(String id, int vni, String cidr) {}
