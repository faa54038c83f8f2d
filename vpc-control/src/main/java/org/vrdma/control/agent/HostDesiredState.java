package org.vrdma.control.agent;

import java.util.Map;
import java.util.TreeMap;

/**
 * Everything one host's vSwitch must be programmed with, at one version. The version is the
 * controller's store revision the state was computed at: it only grows, across controller restarts
 * too, so an agent can tell an older state from a newer one.
 */
public record HostDesiredState(
        String hostId,
        long version,
        Map<String, VpcConfig> vpcs,
        Map<String, EniConfig> enis,
        Map<String, RouteConfig> routes,
        Map<String, SecurityGroupConfig> securityGroups,
        Map<String, QosConfig> qosPolicies) {

    public HostDesiredState {
        vpcs = sorted(vpcs);
        enis = sorted(enis);
        routes = sorted(routes);
        securityGroups = sorted(securityGroups);
        qosPolicies = sorted(qosPolicies);
    }

    public static HostDesiredState empty(String hostId) {
        return new HostDesiredState(hostId, 0, null, null, null, null, null);
    }

    private static <V> Map<String, V> sorted(Map<String, V> m) {
        return m == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(m));
    }

    /** The same content at another version. */
    public HostDesiredState atVersion(long v) {
        return new HostDesiredState(hostId, v, vpcs, enis, routes, securityGroups, qosPolicies);
    }

    /** Whether two states program the same thing, whatever their versions. */
    public boolean sameContent(HostDesiredState o) {
        return vpcs.equals(o.vpcs)
                && enis.equals(o.enis)
                && routes.equals(o.routes)
                && securityGroups.equals(o.securityGroups)
                && qosPolicies.equals(o.qosPolicies);
    }
}
