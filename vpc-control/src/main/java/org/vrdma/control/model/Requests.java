package org.vrdma.control.model;

import java.util.List;

/**
 * Request bodies of the REST API. Create requests name every field a client may set; update
 * requests are partial: a field left out (null) keeps its value.
 */
public final class Requests {
    private Requests() {}

    public record VpcCreate(String name, String cidr) {}

    public record VpcUpdate(String name) {}

    public record SubnetCreate(String name, String vpcId, String cidr) {}

    public record SubnetUpdate(String name) {}

    public record HostCreate(String name, String underlayIp, Integer underlayPort) {}

    public record HostUpdate(String name, String underlayIp, Integer underlayPort) {}

    /** {@code ip} is optional: without it the lowest free address of the subnet is allocated. */
    public record EniCreate(
            String name,
            String subnetId,
            String hostId,
            String ip,
            Boolean vrdma,
            String qosPolicyId,
            List<String> securityGroupIds) {}

    /** An empty {@code qosPolicyId} removes the policy. */
    public record EniUpdate(
            String name, String hostId, Boolean vrdma, String qosPolicyId, List<String> securityGroupIds) {}

    public record RuleSpec(
            String direction, String protocol, String cidr, Integer fromPort, Integer toPort, String action) {}

    public record SecurityGroupCreate(String name, String vpcId, List<RuleSpec> rules) {}

    /** {@code rules}, when given, replaces every rule of the group. */
    public record SecurityGroupUpdate(String name, List<RuleSpec> rules) {}

    public record QosPolicyCreate(String name, Long bandwidthMbps, Integer rdmaShare, Integer tcpShare) {}

    public record QosPolicyUpdate(String name, Long bandwidthMbps, Integer rdmaShare, Integer tcpShare) {}
}
