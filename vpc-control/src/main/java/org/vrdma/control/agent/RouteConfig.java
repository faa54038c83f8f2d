package org.vrdma.control.agent;

/**
 * How to reach an ENI of the same VPC on another host: packets for {@code destination} (a /32) in
 * VNI {@code vni} are encapsulated to the remote host's underlay address.
 */
public record RouteConfig(
        String id,
        String vpcId,
        int vni,
        String destination,
        String remoteEniId,
        String remoteMac,
        boolean vrdma,
        String remoteHostId,
        String underlayIp,
        int underlayPort) {}
