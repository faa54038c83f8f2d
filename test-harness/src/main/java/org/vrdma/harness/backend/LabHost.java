package org.vrdma.harness.backend;

import org.vrdma.harness.perf.RealTimeHost;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * A host of a running lab: its ENI (address, MAC, VPC) and where it runs.
 *
 * @param name the host's name in the lab
 * @param eniIpv4 the ENI's address in the VPC
 * @param vni the VPC's VNI
 * @param environment where the host's processes run and the underlay address they bind
 */
public record LabHost(String name, String eniIpv4, int vni, HostEnvironment environment) {
    /** The ENI's MAC: 02:00 followed by the four address bytes, as {@code ./vrdma host} derives it. */
    public long eniMac() {
        return RealTimeHost.derivedMac(UnderlayAddress.parseIpv4(eniIpv4));
    }

    /** The underlay address the host's vSwitches bind. */
    public String underlayIp() {
        return environment.underlayIp();
    }
}
