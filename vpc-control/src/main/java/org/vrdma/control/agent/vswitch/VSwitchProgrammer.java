package org.vrdma.control.agent.vswitch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.vrdma.control.agent.DataPlaneProgrammer;
import org.vrdma.control.agent.DesiredStates;
import org.vrdma.control.agent.EniConfig;
import org.vrdma.control.agent.HostDesiredState;
import org.vrdma.control.agent.QosConfig;
import org.vrdma.control.agent.RouteConfig;
import org.vrdma.control.agent.SecurityGroupConfig;
import org.vrdma.control.agent.VpcConfig;
import org.vrdma.vswitch.pipeline.Eni;
import org.vrdma.vswitch.pipeline.SecurityGroup;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitch;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * Programs a real {@link VSwitch} from a host's desired state. Every switch call runs on the
 * switch's event loop ({@link VSwitchHost#call}), and the agent's thread waits for it, so a change
 * the switch refuses surfaces as an exception and the agent resyncs in full.
 *
 * <ul>
 *   <li>An ENI becomes a switch port (its own port id, MAC, IP, VNI, vRDMA flag) with the security
 *       group built from its groups' rules ({@link VSwitchMapping#securityGroup}) and its QoS policy
 *       as both its egress and ingress meter ({@link VSwitchMapping#qos}). Its local endpoint comes
 *       from the {@link EniAttachmentFactory}. A change of MAC, IP or VNI replaces the port;
 *       anything else changes it in place.
 *   <li>A route to a remote ENI becomes a remote route (VNI + /32 → the remote host's underlay
 *       address), which also makes that host a known underlay source.
 *   <li>A change to a security group or QoS policy is pushed to every ENI that uses it.
 *   <li>VPCs need no switch state of their own (a VNI exists while an ENI or route uses it); they
 *       are tracked to check references.
 * </ul>
 *
 * <p>A full state is reconciled: the difference between what this programmer has programmed and
 * the desired state is applied, and ports on the switch that it did not make are removed, so an
 * agent restarted over the same programmer converges without duplicating anything. The programmer
 * lives as long as its switch.
 *
 * <p>Its methods wait for the switch's loop while holding the programmer's lock: never call them
 * from that loop (an {@link EniAttachment}'s sink runs there).
 */
public final class VSwitchProgrammer implements DataPlaneProgrammer {
    private final VSwitchHost host;
    private final EniAttachmentFactory attachments;
    private final Map<String, VpcConfig> vpcs = new HashMap<>();
    private final Map<String, QosConfig> qos = new HashMap<>();
    private final Map<String, SecurityGroupConfig> groups = new HashMap<>();
    private final Map<String, Port> enis = new HashMap<>();
    private final Map<String, RouteConfig> routes = new HashMap<>();
    private String hostId;
    private int nextPortId = 1;
    private long version = -1;
    private long fullSyncs;
    private long switchCalls;

    private record Port(EniConfig config, int portId, EniAttachment attachment) {}

    public VSwitchProgrammer(VSwitchHost host, EniAttachmentFactory attachments) {
        this.host = Objects.requireNonNull(host);
        this.attachments = Objects.requireNonNull(attachments);
    }

    public VSwitchHost host() {
        return host;
    }

    // ---------------------------------------------------------------- full state

    @Override
    public synchronized void applyDesiredState(HostDesiredState desired) {
        hostId = desired.hostId();
        forgetPortsTheSwitchLost();
        removeForeignPorts();
        HostDesiredState current = programmed(desired.version());
        DesiredStates.apply(current, DesiredStates.diff(current, desired), this);
        fullSyncs++;
    }

    /** Ports this programmer made that are no longer on the switch are programmed again. */
    private void forgetPortsTheSwitchLost() {
        Map<String, Integer> ports = new HashMap<>();
        enis.forEach((id, p) -> ports.put(id, p.portId()));
        Set<String> lost = call(vs -> {
            Set<String> gone = new HashSet<>();
            ports.forEach((id, port) -> {
                if (vs.eni(port) == null) {
                    gone.add(id);
                }
            });
            return gone;
        });
        for (String id : lost) {
            enis.remove(id).attachment().detached();
        }
    }

    /** Ports on the switch that this programmer did not make go. */
    private void removeForeignPorts() {
        Set<Integer> ours = new HashSet<>();
        enis.values().forEach(p -> ours.add(p.portId()));
        call(vs -> {
            for (Eni eni : vs.enis()) {
                if (!ours.contains(eni.id())) {
                    vs.removeEni(eni.id());
                }
            }
            return null;
        });
    }

    // ---------------------------------------------------------------- VPCs

    @Override
    public synchronized void upsertVpc(VpcConfig vpc) {
        VpcConfig old = vpcs.get(vpc.id());
        if (old != null && old.vni() != vpc.vni() && usesVpc(vpc.id())) {
            throw new IllegalStateException("VPC " + vpc.id() + " changes its VNI while ENIs or routes use it");
        }
        vpcs.put(vpc.id(), vpc);
    }

    @Override
    public synchronized void removeVpc(String vpcId) {
        if (usesVpc(vpcId)) {
            throw new IllegalStateException("VPC " + vpcId + " is still used by an ENI or a route");
        }
        vpcs.remove(vpcId);
    }

    private boolean usesVpc(String vpcId) {
        return enis.values().stream().anyMatch(p -> p.config().vpcId().equals(vpcId))
                || routes.values().stream().anyMatch(r -> r.vpcId().equals(vpcId));
    }

    // ---------------------------------------------------------------- QoS policies and security groups

    @Override
    public synchronized void upsertQosPolicy(QosConfig policy) {
        qos.put(policy.id(), policy);
        var meter = VSwitchMapping.qos(policy);
        List<Integer> users = portsWhere(p -> policy.id().equals(p.config().qosPolicyId()));
        if (!users.isEmpty()) {
            call(vs -> {
                users.forEach(port -> vs.setQos(port, meter, meter));
                return null;
            });
        }
    }

    @Override
    public synchronized void removeQosPolicy(String qosPolicyId) {
        if (!portsWhere(p -> qosPolicyId.equals(p.config().qosPolicyId())).isEmpty()) {
            throw new IllegalStateException("QoS policy " + qosPolicyId + " is still used by an ENI");
        }
        qos.remove(qosPolicyId);
    }

    @Override
    public synchronized void upsertSecurityGroup(SecurityGroupConfig group) {
        groups.put(group.id(), group);
        Map<Integer, SecurityGroup> changed = new HashMap<>();
        for (Port p : enis.values()) {
            if (p.config().securityGroupIds().contains(group.id())) {
                changed.put(p.portId(), securityGroupOf(p.config()));
            }
        }
        if (!changed.isEmpty()) {
            call(vs -> {
                changed.forEach(vs::setSecurityGroup);
                return null;
            });
        }
    }

    @Override
    public synchronized void removeSecurityGroup(String securityGroupId) {
        if (!portsWhere(p -> p.config().securityGroupIds().contains(securityGroupId))
                .isEmpty()) {
            throw new IllegalStateException("security group " + securityGroupId + " is still used by an ENI");
        }
        groups.remove(securityGroupId);
    }

    private List<Integer> portsWhere(java.util.function.Predicate<Port> p) {
        return enis.values().stream().filter(p).map(Port::portId).toList();
    }

    private SecurityGroup securityGroupOf(EniConfig eni) {
        List<SecurityGroupConfig> of = new ArrayList<>();
        for (String g : eni.securityGroupIds()) {
            SecurityGroupConfig c = groups.get(g);
            if (c == null) {
                throw new IllegalStateException("ENI " + eni.id() + " refers to unknown security group " + g);
            }
            of.add(c);
        }
        return VSwitchMapping.securityGroup(of);
    }

    private org.vrdma.vswitch.qos.QosConfig meterOf(EniConfig eni) {
        if (eni.qosPolicyId() == null) {
            return org.vrdma.vswitch.qos.QosConfig.UNLIMITED;
        }
        QosConfig policy = qos.get(eni.qosPolicyId());
        if (policy == null) {
            throw new IllegalStateException("ENI " + eni.id() + " refers to unknown QoS policy " + eni.qosPolicyId());
        }
        return VSwitchMapping.qos(policy);
    }

    // ---------------------------------------------------------------- ENIs

    @Override
    public synchronized void upsertEni(EniConfig eni) {
        VpcConfig vpc = vpcs.get(eni.vpcId());
        if (vpc == null) {
            throw new IllegalStateException("ENI " + eni.id() + " refers to unknown VPC " + eni.vpcId());
        }
        if (vpc.vni() != eni.vni()) {
            throw new IllegalStateException("ENI " + eni.id() + " has VNI " + eni.vni() + ", its VPC " + vpc.vni());
        }
        SecurityGroup sg = securityGroupOf(eni);
        var meter = meterOf(eni);
        Port old = enis.get(eni.id());
        if (old != null && sameAddress(old.config(), eni)) {
            int port = old.portId();
            call(vs -> {
                vs.setRdmaEnabled(port, eni.vrdma());
                vs.setSecurityGroup(port, sg);
                vs.setQos(port, meter, meter);
                return null;
            });
            enis.put(eni.id(), new Port(eni, port, old.attachment()));
            return;
        }
        if (old != null) {
            removeEni(eni.id());
        }
        int port = nextPortId++;
        var config = new org.vrdma.vswitch.pipeline.EniConfig(
                port,
                VSwitchMapping.mac(eni.mac()),
                UnderlayAddress.parseIpv4(eni.ip()),
                eni.vni(),
                eni.vrdma(),
                sg,
                meter,
                meter);
        EniAttachment attachment = attachments.attach(eni);
        try {
            call(vs -> vs.addEni(config, attachment.sink()));
        } catch (RuntimeException e) {
            attachment.detached();
            throw e;
        }
        enis.put(eni.id(), new Port(eni, port, attachment));
        attachment.attached(new EniPort(host, port, eni.id()));
    }

    private static boolean sameAddress(EniConfig a, EniConfig b) {
        return a.vni() == b.vni() && a.ip().equals(b.ip()) && a.mac().equalsIgnoreCase(b.mac());
    }

    @Override
    public synchronized void removeEni(String eniId) {
        Port p = enis.get(eniId);
        if (p == null) {
            return;
        }
        call(vs -> vs.removeEni(p.portId()));
        enis.remove(eniId);
        p.attachment().detached();
    }

    // ---------------------------------------------------------------- routes

    @Override
    public synchronized void upsertRoute(RouteConfig route) {
        if (!vpcs.containsKey(route.vpcId())) {
            throw new IllegalStateException("route " + route.id() + " refers to unknown VPC " + route.vpcId());
        }
        int ip = VSwitchMapping.routeDestination(route);
        long underlay = VSwitchMapping.underlay(route);
        RouteConfig old = routes.get(route.id());
        if (old != null && (old.vni() != route.vni() || VSwitchMapping.routeDestination(old) != ip)) {
            removeRoute(route.id());
        }
        call(vs -> {
            vs.addRemoteRoute(route.vni(), ip, underlay);
            return null;
        });
        routes.put(route.id(), route);
    }

    @Override
    public synchronized void removeRoute(String routeId) {
        RouteConfig r = routes.get(routeId);
        if (r == null) {
            return;
        }
        int ip = VSwitchMapping.routeDestination(r);
        call(vs -> vs.removeRemoteRoute(r.vni(), ip));
        routes.remove(routeId);
    }

    @Override
    public synchronized void committed(long v) {
        version = v;
        notifyAll();
    }

    private <T> T call(Function<VSwitch, T> action) {
        switchCalls++;
        return host.call(action);
    }

    // ---------------------------------------------------------------- reading

    /** What this programmer has programmed, as a state at {@code atVersion}. */
    private HostDesiredState programmed(long atVersion) {
        Map<String, EniConfig> e = new HashMap<>();
        enis.forEach((id, p) -> e.put(id, p.config()));
        return new HostDesiredState(hostId, atVersion, vpcs, e, routes, groups, qos);
    }

    /** What is programmed now, at the last committed version. */
    public synchronized HostDesiredState snapshot() {
        return programmed(version);
    }

    /** The switch port id of ENI {@code eniId}, or -1. */
    public synchronized int portId(String eniId) {
        Port p = enis.get(eniId);
        return p == null ? -1 : p.portId();
    }

    /** The version the switch is programmed at (-1 before the first commit). */
    public synchronized long version() {
        return version;
    }

    public synchronized long fullSyncs() {
        return fullSyncs;
    }

    /** Calls made on the switch's loop so far. */
    public synchronized long switchCalls() {
        return switchCalls;
    }

    /** Waits, at most {@code timeout}, until the committed version is at least {@code v}. */
    public synchronized boolean awaitVersion(long v, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (version < v) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }
}
