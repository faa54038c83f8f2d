package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * Overrides for one host the topology made: its ENIs. A host not listed has one ENI, {@code eni0},
 * in the first VPC.
 *
 * @param name a host name of the topology ({@code h0}, {@code h1}, ...)
 * @param enis the host's ENIs (at least one)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record HostSpec(String name, List<EniSpec> enis) {

    /**
     * An ENI: a vRDMA NIC attached to a VPC on a host.
     *
     * @param name unique on the host
     * @param vpc the VPC's name; default the first VPC
     * @param ipv4 address inside the VPC's CIDR; default the next free address in host order
     * @param cc congestion control of this ENI's QPs; default the lab's
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record EniSpec(String name, String vpc, String ipv4, CcSpec cc) {}
}
