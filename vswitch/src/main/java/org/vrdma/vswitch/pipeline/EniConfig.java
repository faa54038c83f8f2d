package org.vrdma.vswitch.pipeline;

import org.vrdma.vswitch.qos.QosConfig;

/**
 * An elastic network interface as the control plane describes it.
 *
 * @param id switch-local port id
 * @param mac MAC address in the low 48 bits
 * @param ipv4 the ENI's address in its VPC
 * @param vni the VPC's virtual network identifier (24 bits)
 * @param rdmaEnabled whether RoCEv2 (UDP 4791) may leave or reach this ENI
 * @param securityGroup the ENI's security group
 * @param egressQos meter for what the ENI sends
 * @param ingressQos meter for what the ENI receives
 */
public record EniConfig(
        int id,
        long mac,
        int ipv4,
        int vni,
        boolean rdmaEnabled,
        SecurityGroup securityGroup,
        QosConfig egressQos,
        QosConfig ingressQos) {
    public EniConfig {
        if (vni < 0 || vni > 0xFFFFFF) {
            throw new IllegalArgumentException("VNI must be 24 bits: " + vni);
        }
        if (securityGroup == null || egressQos == null || ingressQos == null) {
            throw new IllegalArgumentException("security group and QoS must not be null");
        }
    }

    /** vRDMA on, allow-all security group, no QoS limits. */
    public static EniConfig of(int id, long mac, String ipv4, int vni) {
        return new EniConfig(
                id,
                mac,
                UnderlayAddress.parseIpv4(ipv4),
                vni,
                true,
                SecurityGroup.ALLOW_ALL,
                QosConfig.UNLIMITED,
                QosConfig.UNLIMITED);
    }

    public EniConfig withSecurityGroup(SecurityGroup sg) {
        return new EniConfig(id, mac, ipv4, vni, rdmaEnabled, sg, egressQos, ingressQos);
    }

    public EniConfig withRdmaEnabled(boolean on) {
        return new EniConfig(id, mac, ipv4, vni, on, securityGroup, egressQos, ingressQos);
    }

    public EniConfig withQos(QosConfig egress, QosConfig ingress) {
        return new EniConfig(id, mac, ipv4, vni, rdmaEnabled, securityGroup, egress, ingress);
    }
}
