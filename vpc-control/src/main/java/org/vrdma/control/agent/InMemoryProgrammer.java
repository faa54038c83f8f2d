package org.vrdma.control.agent;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A {@link DataPlaneProgrammer} that keeps the programmed state in memory and checks that every
 * reference is valid when it is made (an ENI's VPC, QoS policy and security groups exist; a route's
 * VPC exists; nothing is removed while still referenced), as a vSwitch would. It stands in for the
 * vSwitch where none runs ({@code vrdma up} today) and lets tests read what an agent programmed.
 */
public final class InMemoryProgrammer implements DataPlaneProgrammer {
    private final Map<String, VpcConfig> vpcs = new HashMap<>();
    private final Map<String, EniConfig> enis = new HashMap<>();
    private final Map<String, RouteConfig> routes = new HashMap<>();
    private final Map<String, SecurityGroupConfig> groups = new HashMap<>();
    private final Map<String, QosConfig> qos = new HashMap<>();
    private String hostId;
    private long version;
    private long fullSyncs;
    private long incrementalOps;

    @Override
    public synchronized void applyDesiredState(HostDesiredState state) {
        hostId = state.hostId();
        vpcs.clear();
        vpcs.putAll(state.vpcs());
        qos.clear();
        qos.putAll(state.qosPolicies());
        groups.clear();
        groups.putAll(state.securityGroups());
        enis.clear();
        routes.clear();
        state.enis().values().forEach(this::checkEni);
        enis.putAll(state.enis());
        state.routes().values().forEach(this::checkRoute);
        routes.putAll(state.routes());
        fullSyncs++;
    }

    @Override
    public synchronized void upsertVpc(VpcConfig vpc) {
        vpcs.put(vpc.id(), vpc);
        incrementalOps++;
    }

    @Override
    public synchronized void removeVpc(String vpcId) {
        boolean used = enis.values().stream().anyMatch(e -> e.vpcId().equals(vpcId))
                || routes.values().stream().anyMatch(r -> r.vpcId().equals(vpcId));
        if (used) {
            throw new IllegalStateException("VPC " + vpcId + " is still used by an ENI or a route");
        }
        vpcs.remove(vpcId);
        incrementalOps++;
    }

    @Override
    public synchronized void upsertQosPolicy(QosConfig policy) {
        qos.put(policy.id(), policy);
        incrementalOps++;
    }

    @Override
    public synchronized void removeQosPolicy(String id) {
        if (enis.values().stream().anyMatch(e -> id.equals(e.qosPolicyId()))) {
            throw new IllegalStateException("QoS policy " + id + " is still used by an ENI");
        }
        qos.remove(id);
        incrementalOps++;
    }

    @Override
    public synchronized void upsertSecurityGroup(SecurityGroupConfig group) {
        groups.put(group.id(), group);
        incrementalOps++;
    }

    @Override
    public synchronized void removeSecurityGroup(String id) {
        if (enis.values().stream().anyMatch(e -> e.securityGroupIds().contains(id))) {
            throw new IllegalStateException("security group " + id + " is still used by an ENI");
        }
        groups.remove(id);
        incrementalOps++;
    }

    @Override
    public synchronized void upsertEni(EniConfig eni) {
        checkEni(eni);
        enis.put(eni.id(), eni);
        incrementalOps++;
    }

    @Override
    public synchronized void removeEni(String eniId) {
        enis.remove(eniId);
        incrementalOps++;
    }

    @Override
    public synchronized void upsertRoute(RouteConfig route) {
        checkRoute(route);
        routes.put(route.id(), route);
        incrementalOps++;
    }

    @Override
    public synchronized void removeRoute(String routeId) {
        routes.remove(routeId);
        incrementalOps++;
    }

    @Override
    public synchronized void committed(long v) {
        version = v;
        notifyAll();
    }

    private void checkEni(EniConfig eni) {
        if (!vpcs.containsKey(eni.vpcId())) {
            throw new IllegalStateException("ENI " + eni.id() + " refers to unknown VPC " + eni.vpcId());
        }
        if (eni.qosPolicyId() != null && !qos.containsKey(eni.qosPolicyId())) {
            throw new IllegalStateException("ENI " + eni.id() + " refers to unknown QoS policy " + eni.qosPolicyId());
        }
        for (String g : eni.securityGroupIds()) {
            if (!groups.containsKey(g)) {
                throw new IllegalStateException("ENI " + eni.id() + " refers to unknown security group " + g);
            }
        }
    }

    private void checkRoute(RouteConfig route) {
        if (!vpcs.containsKey(route.vpcId())) {
            throw new IllegalStateException("route " + route.id() + " refers to unknown VPC " + route.vpcId());
        }
    }

    /** What is programmed now, as a state at the last committed version. */
    public synchronized HostDesiredState snapshot() {
        return new HostDesiredState(hostId, version, vpcs, enis, routes, groups, qos);
    }

    public synchronized long version() {
        return version;
    }

    public synchronized long fullSyncs() {
        return fullSyncs;
    }

    public synchronized long incrementalOps() {
        return incrementalOps;
    }

    /** Waits, at most {@code timeout}, until the programmed state satisfies {@code condition}. */
    public synchronized boolean await(Predicate<HostDesiredState> condition, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.test(snapshot())) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }
}
