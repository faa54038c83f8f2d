package org.vrdma.control.agent;

/**
 * What a host agent drives: the vSwitch of its host. A full state is applied with {@link
 * #applyDesiredState} (the implementation reconciles: it adds, changes and removes until the data
 * plane matches); incremental changes arrive through the upsert/remove operations, in an order that
 * keeps references valid (VPCs, QoS policies and security groups before the ENIs and routes that
 * use them; removals the other way round).
 *
 * <p>Calls come from one agent thread at a time.
 */
public interface DataPlaneProgrammer {
    void applyDesiredState(HostDesiredState state);

    void upsertVpc(VpcConfig vpc);

    void removeVpc(String vpcId);

    void upsertQosPolicy(QosConfig qos);

    void removeQosPolicy(String qosPolicyId);

    void upsertSecurityGroup(SecurityGroupConfig group);

    void removeSecurityGroup(String securityGroupId);

    void upsertEni(EniConfig eni);

    void removeEni(String eniId);

    void upsertRoute(RouteConfig route);

    void removeRoute(String routeId);

    /** Called after a full state or a delta is applied, with the version the data plane is now at. */
    default void committed(long version) {}
}
