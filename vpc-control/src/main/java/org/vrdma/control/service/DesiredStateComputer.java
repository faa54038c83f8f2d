package org.vrdma.control.service;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.vrdma.control.agent.EniConfig;
import org.vrdma.control.agent.HostDesiredState;
import org.vrdma.control.agent.QosConfig;
import org.vrdma.control.agent.RouteConfig;
import org.vrdma.control.agent.SecurityGroupConfig;
import org.vrdma.control.agent.VpcConfig;
import org.vrdma.control.model.Eni;
import org.vrdma.control.model.Host;
import org.vrdma.control.model.QosPolicy;
import org.vrdma.control.model.SecurityGroup;
import org.vrdma.control.model.Subnet;
import org.vrdma.control.model.Vpc;
import org.vrdma.control.store.StoreView;

/**
 * The desired state of every host, as a pure function of one store snapshot: a host gets its own
 * ENIs, the VPCs they are in, the security groups and QoS policies they use, and a route to every
 * ENI of those VPCs placed on another host (with that host's underlay address).
 */
public final class DesiredStateComputer {
    private DesiredStateComputer() {}

    public static Map<String, HostDesiredState> compute(StoreView view) {
        long version = view.revision();
        Map<String, Vpc> vpcs = byId(ControlService.all(view, Kinds.VPC, Vpc.class), Vpc::id);
        Map<String, Subnet> subnets = byId(ControlService.all(view, Kinds.SUBNET, Subnet.class), Subnet::id);
        Map<String, Host> hosts = byId(ControlService.all(view, Kinds.HOST, Host.class), Host::id);
        Map<String, SecurityGroup> groups =
                byId(ControlService.all(view, Kinds.SECURITY_GROUP, SecurityGroup.class), SecurityGroup::id);
        Map<String, QosPolicy> policies =
                byId(ControlService.all(view, Kinds.QOS_POLICY, QosPolicy.class), QosPolicy::id);
        List<Eni> enis = ControlService.all(view, Kinds.ENI, Eni.class);

        Map<String, HostDesiredState> out = new HashMap<>();
        for (Host host : hosts.values()) {
            Map<String, VpcConfig> hv = new HashMap<>();
            Map<String, EniConfig> he = new HashMap<>();
            Map<String, RouteConfig> hr = new HashMap<>();
            Map<String, SecurityGroupConfig> hg = new HashMap<>();
            Map<String, QosConfig> hq = new HashMap<>();
            for (Eni e : enis) {
                if (!host.id().equals(e.hostId())) {
                    continue;
                }
                Vpc vpc = vpcs.get(e.vpcId());
                Subnet subnet = subnets.get(e.subnetId());
                hv.put(vpc.id(), new VpcConfig(vpc.id(), vpc.vni(), vpc.cidr()));
                he.put(
                        e.id(),
                        new EniConfig(
                                e.id(),
                                vpc.id(),
                                vpc.vni(),
                                subnet.id(),
                                subnet.cidr(),
                                subnet.gatewayIp(),
                                e.ip(),
                                e.mac(),
                                e.vrdma(),
                                e.qosPolicyId(),
                                e.securityGroupIds()));
                for (String g : e.securityGroupIds()) {
                    SecurityGroup sg = groups.get(g);
                    hg.put(g, new SecurityGroupConfig(sg.id(), sg.vpcId(), sg.rules()));
                }
                if (e.qosPolicyId() != null) {
                    QosPolicy p = policies.get(e.qosPolicyId());
                    hq.put(p.id(), new QosConfig(p.id(), p.bandwidthMbps(), p.rdmaShare(), p.tcpShare()));
                }
            }
            for (Eni remote : enis) {
                if (remote.hostId() == null || remote.hostId().equals(host.id()) || !hv.containsKey(remote.vpcId())) {
                    continue;
                }
                Host rh = hosts.get(remote.hostId());
                Vpc vpc = vpcs.get(remote.vpcId());
                hr.put(
                        remote.id(),
                        new RouteConfig(
                                remote.id(),
                                vpc.id(),
                                vpc.vni(),
                                remote.ip() + "/32",
                                remote.id(),
                                remote.mac(),
                                remote.vrdma(),
                                rh.id(),
                                rh.underlayIp(),
                                rh.underlayPort()));
            }
            out.put(host.id(), new HostDesiredState(host.id(), version, hv, he, hr, hg, hq));
        }
        return out;
    }

    private static <T> Map<String, T> byId(List<T> items, java.util.function.Function<T, String> id) {
        Map<String, T> m = new HashMap<>();
        for (T t : items) {
            m.put(id.apply(t), t);
        }
        return m;
    }
}
