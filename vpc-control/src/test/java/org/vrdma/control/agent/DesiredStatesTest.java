package org.vrdma.control.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.vrdma.control.model.SecurityGroupRule;

/** Diffs of host states: applying diff(a, b) to a gives b, in an order a data plane accepts. */
class DesiredStatesTest {
    private static HostDesiredState state(long version, boolean withEni, int bandwidth, int rules) {
        VpcConfig vpc = new VpcConfig("vpc-1", 1000, "10.0.0.0/16");
        QosConfig qos = new QosConfig("qos-1", bandwidth, 50, 50);
        List<SecurityGroupRule> r = java.util.stream.IntStream.range(0, rules)
                .mapToObj(i -> new SecurityGroupRule("sgr-" + i, "ingress", "rdma", "0.0.0.0/0", null, null))
                .toList();
        SecurityGroupConfig sg = new SecurityGroupConfig("sg-1", "vpc-1", r);
        EniConfig eni = new EniConfig(
                "eni-1",
                "vpc-1",
                1000,
                "subnet-1",
                "10.0.0.0/24",
                "10.0.0.1",
                "10.0.0.2",
                "02:00:00:00:00:01",
                true,
                "qos-1",
                List.of("sg-1"));
        RouteConfig route = new RouteConfig(
                "eni-2", "vpc-1", 1000, "10.0.0.3/32", "eni-2", "02:00:00:00:00:02", true, "host-2", "127.0.0.1", 6082);
        if (!withEni) {
            return new HostDesiredState("host-1", version, null, null, null, null, null);
        }
        return new HostDesiredState(
                "host-1",
                version,
                Map.of("vpc-1", vpc),
                Map.of("eni-1", eni),
                Map.of("eni-2", route),
                Map.of("sg-1", sg),
                Map.of("qos-1", qos));
    }

    @Test
    void applyingADiffReproducesTheTargetOnStateAndProgrammer() {
        HostDesiredState empty = state(3, false, 0, 0);
        HostDesiredState full = state(7, true, 1000, 2);
        HostDesiredState changed = state(9, true, 500, 1);
        InMemoryProgrammer p = new InMemoryProgrammer();
        p.applyDesiredState(empty);

        HostDesiredState s = DesiredStates.apply(empty, DesiredStates.diff(empty, full), p);
        assertThat(s).isEqualTo(full);
        p.committed(s.version());
        assertThat(p.snapshot().sameContent(full)).isTrue();

        StateDelta small = DesiredStates.diff(full, changed);
        assertThat(small.changes()).extracting(Change::kind).containsExactlyInAnyOrder("qosPolicy", "securityGroup");
        s = DesiredStates.apply(s, small, p);
        assertThat(s).isEqualTo(changed);

        // Tearing down removes dependents first, so the programmer's reference checks hold.
        StateDelta teardown = DesiredStates.diff(changed, state(10, false, 0, 0));
        assertThat(teardown.changes())
                .extracting(Change::kind)
                .containsExactly("route", "eni", "securityGroup", "qosPolicy", "vpc");
        s = DesiredStates.apply(s, teardown, p);
        p.committed(s.version());
        assertThat(p.snapshot().sameContent(empty)).isTrue();
    }

    @Test
    void aDeltaFromAnotherVersionIsRefused() {
        StateDelta d = DesiredStates.diff(state(3, false, 0, 0), state(7, true, 1, 1));
        assertThatThrownBy(() -> DesiredStates.apply(state(4, false, 0, 0), d, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theInMemoryProgrammerRejectsDanglingReferences() {
        InMemoryProgrammer p = new InMemoryProgrammer();
        HostDesiredState full = state(7, true, 1000, 1);
        assertThatThrownBy(() -> p.upsertEni(full.enis().get("eni-1"))).hasMessageContaining("unknown VPC");
        p.applyDesiredState(full);
        assertThatThrownBy(() -> p.removeSecurityGroup("sg-1")).hasMessageContaining("still used");
    }
}
