package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A VPC: an isolated overlay network (one Geneve VNI) with an IPv4 CIDR from which ENIs get their
 * addresses, in host order, from the first usable address on.
 *
 * @param name unique name ENIs refer to
 * @param vni Geneve VNI, 1..16777215, unique
 * @param cidr IPv4 prefix, e.g. {@code 10.0.0.0/16}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record VpcSpec(String name, Integer vni, String cidr) {
    public static final VpcSpec DEFAULT = new VpcSpec("vpc0", 100, "10.0.0.0/16");
}
