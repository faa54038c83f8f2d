package org.vrdma.harness.lab;

import java.util.List;

/** A host of a running lab: its name and its ENIs. */
public interface HostHandle {
    String name();

    List<EniHandle> enis();

    /** ENI by name on this host; LabException when there is none. */
    default EniHandle eni(String name) {
        for (EniHandle e : enis()) {
            if (e.spec().name().equals(name)) {
                return e;
            }
        }
        throw new LabException("", "host " + name() + " has no ENI " + name);
    }
}
