package org.vrdma.harness.backend;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * What a backend brings up: named hosts, each with one vRDMA ENI in one VPC (its VNI). The
 * backend gives every host an underlay address of its own (127.0.0.1 in process, a veth address in
 * a network namespace, the container's address on the lab's Docker network).
 *
 * @param name a short label, part of the names of what the lab creates
 * @param vni the VPC's VNI, 1..2^24-1
 * @param hosts the hosts; names and ENI addresses unique
 * @param linkSeed seed of the hosts' link emulation (each host mixes in its ENI address)
 */
public record LabPlan(String name, int vni, List<HostPlan> hosts, long linkSeed) {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,15}");

    /**
     * One host.
     *
     * @param name lower-case letters, digits and '-', at most 16 characters (it becomes part of
     *     namespace and container names)
     * @param eniIpv4 the ENI's address in the VPC, a dotted quad
     * @param hostLink the host's link to its switch, emulated on its vSwitch uplink (rate, buffer,
     *     ECN, faults, delay); null: the machine's own link as it is
     */
    public record HostPlan(String name, String eniIpv4, LinkSpec hostLink) {
        public HostPlan(String name, String eniIpv4) {
            this(name, eniIpv4, null);
        }
    }

    /** A plan whose hosts' links are the machine's own (no emulation unless a host plan says so). */
    public LabPlan(String name, int vni, List<HostPlan> hosts) {
        this(name, vni, hosts, 1);
    }

    /** Thrown for a plan no backend can bring up, with the reason. */
    public static final class InvalidPlanException extends IllegalArgumentException {
        public InvalidPlanException(String message) {
            super(message);
        }
    }

    public LabPlan {
        hosts = List.copyOf(hosts);
        if (!NAME.matcher(name).matches()) {
            throw new InvalidPlanException("lab name must match " + NAME + ": " + name);
        }
        if (vni <= 0 || vni >= 1 << 24) {
            throw new InvalidPlanException("VNI must be 1..16777215, not " + vni);
        }
        if (hosts.isEmpty()) {
            throw new InvalidPlanException("a lab needs at least one host");
        }
        Set<String> names = new HashSet<>();
        Set<Integer> ips = new HashSet<>();
        for (HostPlan h : hosts) {
            if (!NAME.matcher(h.name()).matches()) {
                throw new InvalidPlanException("host name must match " + NAME + ": " + h.name());
            }
            if (!names.add(h.name())) {
                throw new InvalidPlanException("two hosts are named " + h.name());
            }
            int ip;
            try {
                ip = UnderlayAddress.parseIpv4(h.eniIpv4());
            } catch (RuntimeException e) {
                throw new InvalidPlanException("host " + h.name() + ": bad ENI address " + h.eniIpv4());
            }
            if (!ips.add(ip)) {
                throw new InvalidPlanException("two hosts have the ENI address " + h.eniIpv4());
            }
        }
    }

    /** {@code count} hosts {@code h1..hN} with ENIs 10.100.0.1.. in VPC VNI 100. */
    public static LabPlan hosts(String name, int count) {
        if (count < 1 || count > 250) {
            throw new InvalidPlanException("host count must be 1..250, not " + count);
        }
        List<HostPlan> hosts = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            hosts.add(new HostPlan("h" + i, "10.100.0." + i));
        }
        return new LabPlan(name, 100, hosts);
    }

    public List<String> hostNames() {
        return hosts.stream().map(HostPlan::name).toList();
    }
}
