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
        return new LabNetwork(List.copyOf(g.nodes), List.copyOf(g.links), enis(l, g.hostCount()));
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
