package org.vrdma.harness.lab;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Resolves a validated {@link Lab} into a {@link LabNetwork}: nodes, links, ENIs and addresses. */
public final class TopologyGenerator {
    private final List<LabNetwork.Node> nodes = new ArrayList<>();
    private final List<LabNetwork.Link> links = new ArrayList<>();

    private TopologyGenerator() {}

    /** The network of {@code lab} (defaults applied, validated). */
    public static LabNetwork resolve(Lab lab) {
        Lab l = lab.withDefaults();
        LabValidator.validate(l);
        TopologyGenerator g = new TopologyGenerator();
        g.build(l.topology());
        LabNetwork network = new LabNetwork(List.copyOf(g.nodes), List.copyOf(g.links), enis(l, g.hostCount()));
        sameVpc(l, network);
        return network;
    }

    /**
     * Every flow a workload can make joins two ENIs of one VPC: the vSwitches isolate VPCs, so a
     * flow across two would never complete (it would only retransmit until the run ends).
     */
    private static void sameVpc(Lab lab, LabNetwork network) {
        List<WorkloadSpec> ws = lab.workloads();
        for (int i = 0; i < ws.size(); i++) {
            String p = "workloads[" + i + "]";
            switch (ws.get(i)) {
                case WorkloadSpec.Perftest t -> pair(network, t.client(), p + ".client", t.server(), p + ".server");
                case WorkloadSpec.Incast t -> {
                    if (t.senders() != null) {
                        for (int s = 0; s < t.senders().size(); s++) {
                            pair(
                                    network,
                                    t.receiver(),
                                    p + ".receiver",
                                    t.senders().get(s),
                                    p + ".senders[" + s + "]");
                        }
                    } else {
                        List<String> senders = new ArrayList<>();
                        String receiverHost =
                                network.eni(t.receiver(), p + ".receiver").host();
                        for (int h = 0;
                                senders.size() < t.senderCount()
                                        && h < network.hosts().size();
                                h++) {
                            if (!network.hosts().get(h).name().equals(receiverHost)) {
                                senders.add(network.hosts().get(h).name());
                            }
                        }
                        for (String s : senders) {
                            pair(network, t.receiver(), p + ".receiver", s, p + ".senderCount");
                        }
                    }
                }
                case WorkloadSpec.AllToAll t -> oneVpc(network, t.hosts(), p + ".hosts");
                case WorkloadSpec.Poisson t -> oneVpc(network, t.hosts(), p + ".hosts");
                case WorkloadSpec.Flows t -> {
                    for (int f = 0; f < t.flows().size(); f++) {
                        WorkloadSpec.Flow flow = t.flows().get(f);
                        String fp = p + ".flows[" + f + "]";
                        pair(network, flow.src(), fp + ".src", flow.dst(), fp + ".dst");
                    }
                }
            }
        }
    }

    /** ENIs {@code a} and {@code b} are in one VPC; the error names {@code b}'s field. */
    private static void pair(LabNetwork network, String a, String aPath, String b, String bPath) {
        LabNetwork.LabEni x = network.eni(a, aPath);
        LabNetwork.LabEni y = network.eni(b, bPath);
        if (!x.vpc().equals(y.vpc())) {
            throw new LabException(
                    bPath,
                    y.id() + " is in VPC " + y.vpc() + ", " + x.id() + " in VPC " + x.vpc()
                            + ": ENIs reach only ENIs of their own VPC");
        }
    }

    private static void oneVpc(LabNetwork network, List<String> hosts, String path) {
        List<String> refs = hosts != null
                ? hosts
                : network.hosts().stream().map(LabNetwork.LabHost::name).toList();
        for (int h = 1; h < refs.size(); h++) {
            LabNetwork.LabEni first = network.eni(refs.getFirst(), path);
            LabNetwork.LabEni e = network.eni(refs.get(h), path);
            if (!first.vpc().equals(e.vpc())) {
                throw new LabException(
                        path,
                        "flows would join " + first.id() + " (VPC " + first.vpc() + ") and " + e.id() + " (VPC "
                                + e.vpc() + "), but ENIs reach only ENIs of their own VPC; list the hosts of one VPC"
                                + (hosts == null ? " in hosts" : ""));
            }
        }
    }

    /** Number of hosts the topology makes. */
    public static int hostCount(TopologySpec t) {
        return switch (t.type()) {
            case "pair" -> 2;
            case "star" -> t.hosts();
            case "dumbbell" -> t.leftHosts() + t.rightHosts();
            case "leafSpine" -> t.leaves() * t.hostsPerLeaf();
            case "fatTree" -> pods(t) * (t.k() / 2) * hostsPerTor(t);
            default -> throw new LabException("topology.type", "unknown topology " + t.type());
        };
    }

    static int pods(TopologySpec t) {
        return t.pods() != null ? t.pods() : t.k();
    }

    static int hostsPerTor(TopologySpec t) {
        return t.hostsPerTor() != null ? t.hostsPerTor() : t.k() / 2;
    }

    /** The host link spec with defaults, the fabric link over it, the bottleneck over that. */
    public static LinkSpec hostLink(TopologySpec t) {
        return t.hostLink() == null ? LinkSpec.DEFAULT : t.hostLink().over(LinkSpec.DEFAULT);
    }

    public static LinkSpec fabricLink(TopologySpec t) {
        return t.fabricLink() == null ? hostLink(t) : t.fabricLink().over(hostLink(t));
    }

    public static LinkSpec bottleneckLink(TopologySpec t) {
        return t.bottleneckLink() == null ? fabricLink(t) : t.bottleneckLink().over(fabricLink(t));
    }

    private int hostCount() {
        int n = 0;
        for (LabNetwork.Node node : nodes) {
            if (node.host()) {
                n++;
            }
        }
        return n;
    }

    private void build(TopologySpec t) {
        int hosts = hostCount(t);
        for (int i = 0; i < hosts; i++) {
            nodes.add(new LabNetwork.Node(i, "h" + i, true, 0));
        }
        LinkSpec host = hostLink(t);
        LinkSpec fabric = fabricLink(t);
        switch (t.type()) {
            case "pair" -> links.add(new LabNetwork.Link(0, 1, host));
            case "star" -> {
                int tor = addSwitch("tor", 1);
                for (int i = 0; i < hosts; i++) {
                    links.add(new LabNetwork.Link(i, tor, host));
                }
            }
            case "dumbbell" -> {
                int left = addSwitch("left", 1);
                int right = addSwitch("right", 1);
                for (int i = 0; i < hosts; i++) {
                    links.add(new LabNetwork.Link(i, i < t.leftHosts() ? left : right, host));
                }
                links.add(new LabNetwork.Link(left, right, bottleneckLink(t)));
            }
            case "leafSpine" -> {
                int[] leaves = new int[t.leaves()];
                for (int l = 0; l < leaves.length; l++) {
                    leaves[l] = addSwitch("leaf" + l, 1);
                    for (int h = 0; h < t.hostsPerLeaf(); h++) {
                        links.add(new LabNetwork.Link(l * t.hostsPerLeaf() + h, leaves[l], host));
                    }
                }
                for (int s = 0; s < t.spines(); s++) {
                    int spine = addSwitch("spine" + s, 2);
                    for (int leaf : leaves) {
                        links.add(new LabNetwork.Link(leaf, spine, fabric));
                    }
                }
            }
            case "fatTree" -> {
                int half = t.k() / 2;
                int pods = pods(t);
                int perTor = hostsPerTor(t);
                int[] cores = new int[half * half];
                int[][] aggs = new int[pods][half];
                int h = 0;
                for (int p = 0; p < pods; p++) {
                    int[] tors = new int[half];
                    for (int e = 0; e < half; e++) {
                        tors[e] = addSwitch("tor" + p + "-" + e, 1);
                        for (int i = 0; i < perTor; i++) {
                            links.add(new LabNetwork.Link(h++, tors[e], host));
                        }
                    }
                    for (int a = 0; a < half; a++) {
                        aggs[p][a] = addSwitch("agg" + p + "-" + a, 2);
                        for (int tor : tors) {
                            links.add(new LabNetwork.Link(tor, aggs[p][a], fabric));
                        }
                    }
                }
                for (int c = 0; c < cores.length; c++) {
                    cores[c] = addSwitch("core" + c, 3);
                    for (int p = 0; p < pods; p++) {
                        // Aggregation switch a of each pod reaches cores a*half .. a*half+half-1.
                        links.add(new LabNetwork.Link(aggs[p][c / half], cores[c], fabric));
                    }
                }
            }
            default -> throw new LabException("topology.type", "unknown topology " + t.type());
        }
    }

    private int addSwitch(String name, int tier) {
        int id = nodes.size();
        nodes.add(new LabNetwork.Node(id, name, false, tier));
        return id;
    }

    private static List<LabNetwork.LabHost> enis(Lab lab, int hostCount) {
        Map<String, VpcSpec> vpcs = new HashMap<>();
        Map<String, Integer> nextAddress = new HashMap<>();
        for (VpcSpec v : lab.vpcs()) {
            vpcs.put(v.name(), v);
            nextAddress.put(v.name(), Ipv4.parseCidrBase(v.cidr()) + 1);
        }
        Map<String, HostSpec> overrides = new HashMap<>();
        for (HostSpec h : lab.hosts()) {
            overrides.put(h.name(), h);
        }
        Set<Long> used = new HashSet<>();
        List<LabNetwork.LabHost> hosts = new ArrayList<>();
        long mac = 0x02_00_00_00_00_00L;
        String firstVpc = lab.vpcs().getFirst().name();
        for (int i = 0; i < hostCount; i++) {
            String name = "h" + i;
            HostSpec spec = overrides.get(name);
            List<HostSpec.EniSpec> enis =
                    spec == null ? List.of(new HostSpec.EniSpec("eni0", null, null, null)) : spec.enis();
            List<LabNetwork.LabEni> resolved = new ArrayList<>();
            for (int e = 0; e < enis.size(); e++) {
                HostSpec.EniSpec eni = enis.get(e);
                String vpcName = eni.vpc() == null ? firstVpc : eni.vpc();
                VpcSpec vpc = vpcs.get(vpcName);
                int ip;
                if (eni.ipv4() != null) {
                    ip = Ipv4.parse(eni.ipv4());
                } else {
                    ip = nextAddress.get(vpcName);
                    while (used.contains(((long) vpc.vni() << 32) | (ip & 0xFFFFFFFFL))) {
                        ip++;
                    }
                }
                String path = "hosts[" + name + "].enis[" + e + "]";
                if (!Ipv4.inCidr(ip, vpc.cidr())) {
                    throw new LabException(
                            path, "address " + Ipv4.format(ip) + " is outside " + vpc.cidr() + " of " + vpcName);
                }
                if (!used.add(((long) vpc.vni() << 32) | (ip & 0xFFFFFFFFL))) {
                    throw new LabException(path + ".ipv4", Ipv4.format(ip) + " is used twice in VPC " + vpcName);
                }
                nextAddress.put(vpcName, ip + 1);
                mac++;
                resolved.add(new LabNetwork.LabEni(
                        name,
                        eni.name() == null ? "eni" + e : eni.name(),
                        vpcName,
                        vpc.vni(),
                        ip,
                        mac,
                        eni.cc() != null ? eni.cc() : lab.cc()));
            }
            hosts.add(new LabNetwork.LabHost(i, name, List.copyOf(resolved)));
        }
        return hosts;
    }
}
