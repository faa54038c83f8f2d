package org.vrdma.control.model;

import java.util.List;

/** An elastic network interface: an address in a subnet, placed on a host, optionally carrying vRDMA. */
public record Eni(
        String id,
        String name,
        String vpcId,
        String subnetId,
        String hostId,
        String ip,
        String mac,
        boolean vrdma,
        String qosPolicyId,
        List<String> securityGroupIds,
        long version) {}
