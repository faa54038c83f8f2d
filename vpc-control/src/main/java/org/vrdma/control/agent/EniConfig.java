package org.vrdma.control.agent;

import java.util.List;

/** An ENI placed on this host: the vSwitch port to create, with its policies by id. */
public record EniConfig(
        String id,
        String vpcId,
        int vni,
        String subnetId,
        String subnetCidr,
        String gatewayIp,
        String ip,
        String mac,
        boolean vrdma,
        String qosPolicyId,
        List<String> securityGroupIds) {}
