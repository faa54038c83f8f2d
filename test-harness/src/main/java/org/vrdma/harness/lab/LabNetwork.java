package org.vrdma.harness.lab;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A lab resolved into concrete nodes and links: what {@link TopologyGenerator} made of the
 * topology, and every ENI with its VPC, VNI, address and congestion control. Backends build from
 * this; it is the same for every backend.
 *
 * @param nodes hosts first (node id = host index), then switches
 * @param links bidirectional links between nodes; both directions have the link's spec
 * @param hosts the hosts in order ({@code hosts.get(i).node() == i})
 */
public record LabNetwork(List<Node> nodes, List<Link> links, List<LabHost> hosts) {

    /** A host or a switch. {@code tier}: 0 host, 1 ToR/leaf/edge, 2 spine/aggregation, 3 core. */
    public record Node(int id, String name, boolean host, int tier) {}

    /** A full-duplex link between nodes {@code a} and {@code b}. */
    public record Link(int a, int b, LinkSpec spec) {}

    /** A host: its node id, name and ENIs. */
    public record LabHost(int node, String name, List<LabEni> enis) {}

    /**
     * An ENI as every backend sees it.
     *
     * @param host the host's name
     * @param name the ENI's name on the host
     * @param vpc the VPC's name
     * @param vni the VPC's VNI
     * @param ipv4 IPv4 address in the VPC (big-endian int)
     * @param mac MAC address (low 48 bits), unique in the lab
     * @param cc congestion control of its QPs unless a workload sets one
     */
    public record LabEni(String host, String name, String vpc, int vni, int ipv4, long mac, CcSpec cc) {
        /** {@code host/eni}. */
        public String id() {
            return host + "/" + name;
        }
    }

    public LabHost host(String name) {
        for (LabHost h : hosts) {
            if (h.name.equals(name)) {
                return h;
            }
        }
        throw new LabException("", "no host " + name);
    }

    /**
     * The ENI named {@code host} (its first ENI) or {@code host/eni}.
     *
     * @throws LabException naming {@code path} when there is none
     */
    public LabEni eni(String ref, String path) {
        int slash = ref.indexOf('/');
        String hostName = slash < 0 ? ref : ref.substring(0, slash);
        for (LabHost h : hosts) {
            if (h.name.equals(hostName)) {
                if (slash < 0) {
                    return h.enis.getFirst();
                }
                String eniName = ref.substring(slash + 1);
                for (LabEni e : h.enis) {
                    if (e.name.equals(eniName)) {
                        return e;
                    }
                }
                throw new LabException(path, "host " + hostName + " has no ENI " + eniName);
            }
        }
        throw new LabException(path, "no host " + hostName + " in the topology");
    }

    /** Links of each node, as indices into {@link #links}. */
    public List<List<Integer>> adjacency() {
        List<List<Integer>> adj = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            adj.add(new ArrayList<>());
        }
        for (int i = 0; i < links.size(); i++) {
            adj.get(links.get(i).a).add(i);
            adj.get(links.get(i).b).add(i);
        }
        return adj;
    }

    /** Hop distance from every node to {@code target} (breadth-first; -1 where unreachable). */
    public int[] distancesTo(int target) {
        List<List<Integer>> adj = adjacency();
        int[] d = new int[nodes.size()];
        Arrays.fill(d, -1);
        d[target] = 0;
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        queue.add(target);
        while (!queue.isEmpty()) {
            int n = queue.poll();
            for (int li : adj.get(n)) {
                Link l = links.get(li);
                int m = l.a == n ? l.b : l.a;
                if (d[m] < 0) {
                    d[m] = d[n] + 1;
                    queue.add(m);
                }
            }
        }
        return d;
    }

    /**
     * The links of one shortest path from host {@code src} to host {@code dst}, in order (every
     * shortest path of the generated topologies has the same rates and delays).
     */
    public List<LinkSpec> path(int src, int dst) {
        int[] d = distancesTo(dst);
        if (d[src] < 0) {
            throw new LabException(
                    "topology", "host " + hosts.get(dst).name + " is unreachable from " + hosts.get(src).name);
        }
        List<List<Integer>> adj = adjacency();
        List<LinkSpec> path = new ArrayList<>();
        int n = src;
        while (n != dst) {
            for (int li : adj.get(n)) {
                Link l = links.get(li);
                int m = l.a == n ? l.b : l.a;
                if (d[m] == d[n] - 1) {
                    path.add(l.spec);
                    n = m;
                    break;
                }
            }
        }
        return path;
    }

    /** Host index by name. */
    public Map<String, Integer> hostIndex() {
        Map<String, Integer> m = new HashMap<>();
        for (LabHost h : hosts) {
            m.put(h.name, h.node);
        }
        return m;
    }
}
