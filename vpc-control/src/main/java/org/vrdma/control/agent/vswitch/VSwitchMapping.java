package org.vrdma.control.agent.vswitch;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.vrdma.control.agent.QosConfig;
import org.vrdma.control.agent.RouteConfig;
import org.vrdma.control.agent.SecurityGroupConfig;
import org.vrdma.control.model.SecurityGroupRule;
import org.vrdma.vswitch.pipeline.SecurityGroup;
import org.vrdma.vswitch.pipeline.SecurityRule;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/** How the control plane's resources map onto the vSwitch's configuration. */
public final class VSwitchMapping {
    static final int PROTOCOL_ICMP = 1;
    static final int PROTOCOL_TCP = 6;
    static final int PROTOCOL_UDP = 17;
    static final int ROCE_V2_PORT = 4791;
    /** Bytes each QoS class may queue while it waits for tokens. */
    public static final long CLASS_QUEUE_BYTES = 1 << 20;
    /** ENI token bucket depth. */
    public static final long BURST_BYTES = 64 * 1024;

    private VSwitchMapping() {}

    /** {@code 02:00:00:00:00:01} → the MAC in the low 48 bits. */
    public static long mac(String mac) {
        String hex = mac.replace(":", "").replace("-", "");
        if (hex.length() != 12) {
            throw new IllegalArgumentException("not a MAC address: " + mac);
        }
        return Long.parseLong(hex, 16);
    }

    /** A policy's ENI bandwidth and RDMA/TCP shares as a meter (egress and ingress alike). */
    public static org.vrdma.vswitch.qos.QosConfig qos(QosConfig policy) {
        if (policy == null) {
            return org.vrdma.vswitch.qos.QosConfig.UNLIMITED;
        }
        // A share of 0 still gets weight 1: the class may use what the other leaves idle.
        return new org.vrdma.vswitch.qos.QosConfig(
                policy.bandwidthMbps() * 1_000_000L,
                BURST_BYTES,
                0,
                0,
                Math.max(1, policy.rdmaShare()),
                Math.max(1, policy.tcpShare()),
                CLASS_QUEUE_BYTES);
    }

    /**
     * The vSwitch security group of an ENI in {@code groups}: per direction the deny rules of every
     * group, then their allow rules, first match wins; what no rule matches is dropped. An ENI in no
     * group is not filtered.
     */
    public static SecurityGroup securityGroup(Collection<SecurityGroupConfig> groups) {
        if (groups.isEmpty()) {
            return SecurityGroup.ALLOW_ALL;
        }
        List<SecurityRule> ingress = new ArrayList<>();
        List<SecurityRule> egress = new ArrayList<>();
        for (boolean denyPass : new boolean[] {true, false}) {
            for (SecurityGroupConfig g : groups) {
                for (SecurityGroupRule r : g.rules()) {
                    if (r.denies() == denyPass) {
                        ("egress".equals(r.direction()) ? egress : ingress).add(rule(r));
                    }
                }
            }
        }
        String name =
                String.join("+", groups.stream().map(SecurityGroupConfig::id).toList());
        return new SecurityGroup(name, ingress, egress, false);
    }

    /** One control-plane rule as a vSwitch rule ({@code rdma} is UDP to port 4791). */
    public static SecurityRule rule(SecurityGroupRule r) {
        String cidr = r.cidr() == null ? "0.0.0.0/0" : r.cidr();
        int slash = cidr.indexOf('/');
        int ip = UnderlayAddress.parseIpv4(slash < 0 ? cidr : cidr.substring(0, slash));
        int prefix = slash < 0 ? 32 : Integer.parseInt(cidr.substring(slash + 1));
        int protocol;
        int from = 0;
        int to = 0xFFFF;
        switch (r.protocol() == null ? "all" : r.protocol()) {
            case "all" -> protocol = SecurityRule.ANY_PROTOCOL;
            case "icmp" -> protocol = PROTOCOL_ICMP;
            case "rdma" -> {
                protocol = PROTOCOL_UDP;
                from = ROCE_V2_PORT;
                to = ROCE_V2_PORT;
            }
            case "tcp", "udp" -> {
                protocol = r.protocol().equals("tcp") ? PROTOCOL_TCP : PROTOCOL_UDP;
                if (r.fromPort() != null) {
                    from = r.fromPort();
                    to = r.toPort() == null ? from : r.toPort();
                }
            }
            default -> throw new IllegalArgumentException("unknown protocol " + r.protocol() + " in rule " + r.id());
        }
        return new SecurityRule(!r.denies(), protocol, from, to, ip, prefix);
    }

    /** The inner address a /32 route is for. */
    public static int routeDestination(RouteConfig route) {
        String d = route.destination();
        int slash = d.indexOf('/');
        if (slash >= 0 && !d.substring(slash + 1).equals("32")) {
            throw new IllegalArgumentException("route " + route.id() + " is not a /32: " + d);
        }
        return UnderlayAddress.parseIpv4(slash < 0 ? d : d.substring(0, slash));
    }

    /** The remote host's underlay address. */
    public static long underlay(RouteConfig route) {
        return UnderlayAddress.of(UnderlayAddress.parseIpv4(route.underlayIp()), route.underlayPort());
    }
}
