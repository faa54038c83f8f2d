package org.vrdma.control.agent;

import java.util.List;
import java.util.Map;

/** Request bodies for {@code POST /v1/enis} that the agent tests send. */
public final class Enis {
    private Enis() {}

    /** An ENI with vRDMA on, in {@code subnet} on {@code host}, under QoS policy {@code qos} and security group {@code sg}. */
    public static Map<String, Object> vrdma(String subnet, String host, String qos, String sg) {
        return Map.of(
                "subnetId", subnet, "hostId", host, "vrdma", true, "qosPolicyId", qos, "securityGroupIds", List.of(sg));
    }
}
