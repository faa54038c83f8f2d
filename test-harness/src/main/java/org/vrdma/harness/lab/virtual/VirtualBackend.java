package org.vrdma.harness.lab.virtual;

import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabRun;

/**
 * The {@code virtual} backend: the lab in deterministic virtual time, with the real vSwitch
 * pipeline, vNIC transport and congestion control over modelled links and ECMP switches.
 */
public final class VirtualBackend implements LabBackend {
    @Override
    public String name() {
        return "virtual";
    }

    @Override
    public String description() {
        return "discrete-event virtual time: modelled links and switches, real vSwitch and vNIC code, seeded";
    }

    @Override
    public LabRun start(Lab lab) {
        return new VirtualLab(lab);
    }
}
