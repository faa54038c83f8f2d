package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Hosts, switches and links, generated from a few parameters by {@link TopologyGenerator}. Hosts are
 * named {@code h0}, {@code h1}, ... in the order below; switches are named by role.
 *
 * <ul>
 *   <li>{@code pair}: two hosts and one link between their vSwitches (no switch).
 *   <li>{@code star}: {@code hosts} hosts on one top-of-rack switch ({@code tor}).
 *   <li>{@code dumbbell}: {@code leftHosts} on switch {@code left}, {@code rightHosts} on switch
 *       {@code right}, joined by one {@code bottleneckLink}; left hosts come first.
 *   <li>{@code leafSpine}: {@code leaves} leaf switches with {@code hostsPerLeaf} hosts each, every
 *       leaf linked to each of {@code spines} spines by a {@code fabricLink}; ECMP over the spines.
 *   <li>{@code fatTree}: three tiers from the k-ary fat tree (Al-Fares et al., SIGCOMM 2008):
 *       {@code pods} pods (default k) of k/2 ToRs and k/2 aggregation switches, (k/2)² cores, each
 *       aggregation switch linked to k/2 cores, {@code hostsPerTor} hosts per ToR (default k/2); ECMP
 *       on every tier. The HPCC paper's network is {@code k=8, pods=5, hostsPerTor=16}: 320 hosts, 20
 *       ToRs, 20 aggregation and 16 core switches.
 * </ul>
 *
 * @param type {@code pair}, {@code star}, {@code dumbbell}, {@code leafSpine} or {@code fatTree}
 * @param hostLink host-to-switch links (the host NIC's rate); fields left out take {@link
 *     LinkSpec#DEFAULT}
 * @param fabricLink switch-to-switch links; fields left out take {@code hostLink}'s
 * @param bottleneckLink the dumbbell's middle link; fields left out take {@code fabricLink}'s
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TopologySpec(
        String type,
        Integer hosts,
        Integer leftHosts,
        Integer rightHosts,
        Integer leaves,
        Integer spines,
        Integer hostsPerLeaf,
        Integer k,
        Integer pods,
        Integer hostsPerTor,
        LinkSpec hostLink,
        LinkSpec fabricLink,
        LinkSpec bottleneckLink) {

    public static TopologySpec pair(LinkSpec link) {
        return new TopologySpec("pair", null, null, null, null, null, null, null, null, null, link, null, null);
    }

    public static TopologySpec star(int hosts, LinkSpec hostLink) {
        return new TopologySpec("star", hosts, null, null, null, null, null, null, null, null, hostLink, null, null);
    }

    public static TopologySpec dumbbell(int left, int right, LinkSpec hostLink, LinkSpec bottleneck) {
        return new TopologySpec(
                "dumbbell", null, left, right, null, null, null, null, null, null, hostLink, null, bottleneck);
    }

    public static TopologySpec leafSpine(
            int leaves, int spines, int hostsPerLeaf, LinkSpec hostLink, LinkSpec fabricLink) {
        return new TopologySpec(
                "leafSpine",
                null,
                null,
                null,
                leaves,
                spines,
                hostsPerLeaf,
                null,
                null,
                null,
                hostLink,
                fabricLink,
                null);
    }

    public static TopologySpec fatTree(
            int k, Integer pods, Integer hostsPerTor, LinkSpec hostLink, LinkSpec fabricLink) {
        return new TopologySpec(
                "fatTree", null, null, null, null, null, null, k, pods, hostsPerTor, hostLink, fabricLink, null);
    }
}
