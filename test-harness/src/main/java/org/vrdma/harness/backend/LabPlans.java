package org.vrdma.harness.backend;

import java.util.ArrayList;
import java.util.List;
import org.vrdma.harness.lab.Ipv4;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.TopologyGenerator;

/** Turns a lab definition into what the real-time backends bring up. */
public final class LabPlans {
    private LabPlans() {}

    /**
     * The hosts of {@code lab} with their ENIs. The real-time backends run one ENI per host, all in
     * one VPC, on the machine's real network (links are not modelled); anything else is a {@link
     * LabException} naming the field.
     */
    public static LabPlan of(Lab lab) {
        checkRealTime(lab);
        LabNetwork net = TopologyGenerator.resolve(lab);
        return of(lab.name() == null ? "lab" : lab.name(), net);
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

    static LabPlan of(String labName, LabNetwork net) {
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
            hosts.add(new LabPlan.HostPlan(h.name(), Ipv4.format(eni.ipv4())));
        }
        String name = labName.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (name.isEmpty() || !Character.isLetter(name.charAt(0))) {
            name = "lab-" + name;
        }
        try {
            return new LabPlan(name.length() > 16 ? name.substring(0, 16) : name, vni, hosts);
        } catch (LabPlan.InvalidPlanException e) {
            throw new LabException("hosts", e.getMessage());
        }
    }
}
