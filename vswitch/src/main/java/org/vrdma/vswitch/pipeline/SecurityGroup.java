package org.vrdma.vswitch.pipeline;

import java.util.List;

/**
 * A stateless security group: ordered ingress and egress rules, first match wins, and a default
 * action for packets no rule matches. Immutable, so a running switch swaps a whole group at once;
 * several ENIs may share one.
 */
public final class SecurityGroup {
    /** Allows everything in both directions. */
    public static final SecurityGroup ALLOW_ALL = new SecurityGroup("allow-all", List.of(), List.of(), true);

    private final String name;
    private final SecurityRule[] ingress;
    private final SecurityRule[] egress;
    private final boolean defaultAllow;

    /**
     * @param ingress rules for packets arriving at the ENI (remote = source address), in order
     * @param egress rules for packets the ENI sends (remote = destination address), in order
     * @param defaultAllow what happens to packets no rule matches
     */
    public SecurityGroup(String name, List<SecurityRule> ingress, List<SecurityRule> egress, boolean defaultAllow) {
        this.name = name;
        this.ingress = ingress.toArray(SecurityRule[]::new);
        this.egress = egress.toArray(SecurityRule[]::new);
        this.defaultAllow = defaultAllow;
    }

    public String name() {
        return name;
    }

    public boolean defaultAllow() {
        return defaultAllow;
    }

    public List<SecurityRule> ingressRules() {
        return List.of(ingress);
    }

    public List<SecurityRule> egressRules() {
        return List.of(egress);
    }

    /** Whether a packet arriving from {@code srcIpv4} may reach the ENI. */
    public boolean allowsIngress(int protocol, int dstPort, int srcIpv4) {
        return evaluate(ingress, protocol, dstPort, srcIpv4);
    }

    /** Whether the ENI may send a packet to {@code dstIpv4}. */
    public boolean allowsEgress(int protocol, int dstPort, int dstIpv4) {
        return evaluate(egress, protocol, dstPort, dstIpv4);
    }

    private boolean evaluate(SecurityRule[] rules, int protocol, int dstPort, int remoteIpv4) {
        for (SecurityRule rule : rules) {
            if (rule.matches(protocol, dstPort, remoteIpv4)) {
                return rule.allow();
            }
        }
        return defaultAllow;
    }

    @Override
    public String toString() {
        return "SecurityGroup[" + name + ", " + ingress.length + " in, " + egress.length + " out, default "
                + (defaultAllow ? "allow" : "deny") + "]";
    }
}
