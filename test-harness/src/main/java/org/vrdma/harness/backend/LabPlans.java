package org.vrdma.harness.backend;

import java.util.ArrayList;
import java.util.List;
import org.vrdma.harness.lab.Ipv4;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.harness.lab.TopologyGenerator;

/** Turns a lab definition into what the real-time backends bring up. */
public final class LabPlans {
    private LabPlans() {}

    /**
     * The hosts of {@code lab} with their ENIs and their links to their switches. The real-time
     * backends run one ENI per host, all in one VPC, on the machine's real network, each host's
     * link emulated on its vSwitch uplink; anything else is a {@link LabException} naming the field.
     */
    public static LabPlan of(Lab lab) {
        checkRealTime(lab);
        LabNetwork net = TopologyGenerator.resolve(lab);
        return of(lab.name() == null ? "lab" : lab.name(), net, lab.seed() == null ? 1 : lab.seed());
    }

    /** What a real-time backend cannot run at all, as a {@link LabException} naming the field. */
    static void checkRealTime(Lab lab) {
        if (lab.pfc() != null && lab.pfc().on()) {
            throw new LabException(
                    "pfc",
                    "priority flow control is modelled by the virtual backend only: the real-time backends' links"
                            + " are the machine's own (loopback, veth, a Docker bridge), which pause nothing");
        }
    }

    /**
     * The link between host {@code h} and its switch (pair: the link between the two hosts), or null
     * when the host has more than one link.
     */
    static LinkSpec hostLink(LabNetwork net, LabNetwork.LabHost h) {
        LinkSpec found = null;
        for (LabNetwork.Link l : net.links()) {
            if (l.a() == h.node() || l.b() == h.node()) {
                if (found != null) {
                    return null;
                }
                found = l.spec();
            }
        }
        return found;
    }

    /** Links with no host at either end: the real-time backends cannot emulate them. */
    static List<LabNetwork.Link> switchLinks(LabNetwork net) {
        List<LabNetwork.Link> out = new ArrayList<>();
        for (LabNetwork.Link l : net.links()) {
            if (!net.nodes().get(l.a()).host() && !net.nodes().get(l.b()).host()) {
                out.add(l);
            }
        }
        return out;
    }

    static LabPlan of(String labName, LabNetwork net, long seed) {
        List<LabPlan.HostPlan> hosts = new ArrayList<>();
        int vni = -1;
        for (LabNetwork.LabHost h : net.hosts()) {
            if (h.enis().size() != 1) {
                throw new LabException(
                        "hosts",
                        "host " + h.name() + " has " + h.enis().size()
                                + " ENIs; the real-time backends run one ENI per host (the virtual backend runs more)");
            }
            LabNetwork.LabEni eni = h.enis().getFirst();
            if (vni >= 0 && eni.vni() != vni) {
                throw new LabException("vpcs", "ENIs in more than one VPC; the real-time backends run one VPC");
            }
            vni = eni.vni();
            hosts.add(new LabPlan.HostPlan(h.name(), Ipv4.format(eni.ipv4()), hostLink(net, h)));
        }
        String name = labName.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (name.isEmpty() || !Character.isLetter(name.charAt(0))) {
            name = "lab-" + name;
        }
        try {
            return new LabPlan(name.length() > 16 ? name.substring(0, 16) : name, vni, hosts, seed);
        } catch (LabPlan.InvalidPlanException e) {
            throw new LabException("hosts", e.getMessage());
        }
    }
}
