package org.vrdma.harness.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The generated topologies have the right shape, addresses and shortest paths. */
class TopologyGeneratorTest {
    private static LabNetwork resolve(TopologySpec t) {
        return TopologyGenerator.resolve(
                new Lab("t", null, null, null, null, null, t, null, null, null, null, null, null));
    }

    @Test
    void hpccFatTreeHas320HostsAnd56Switches() {
        LabNetwork net = TopologyGenerator.resolve(ReadyLabs.hpccFatTree("dcqcn", 0.3, 100, 0, 1));
        assertThat(net.hosts()).hasSize(320);
        assertThat(net.nodes().stream().filter(n -> !n.host())).hasSize(20 + 20 + 16);
        // 320 host links, 5 pods x 4 ToRs x 4 aggregation links, 16 cores x 5 pods.
        assertThat(net.links()).hasSize(320 + 80 + 80);
        // Across pods: host, ToR, aggregation, core, aggregation, ToR, host = 6 links.
        List<LinkSpec> path = net.path(0, 319);
        assertThat(path).hasSize(6);
        assertThat(path.getFirst().rateGbps()).isEqualTo(100.0);
        assertThat(path.get(2).rateGbps()).isEqualTo(400.0);
        // Same ToR: two links.
        assertThat(net.path(0, 15)).hasSize(2);
        // Within a pod, other ToR: four links.
        assertThat(net.path(0, 16)).hasSize(4);
        Set<Integer> ips = new HashSet<>();
        Set<Long> macs = new HashSet<>();
        for (LabNetwork.LabHost h : net.hosts()) {
            ips.add(h.enis().getFirst().ipv4());
            macs.add(h.enis().getFirst().mac());
        }
        assertThat(ips).hasSize(320);
        assertThat(macs).hasSize(320);
    }

    @Test
    void kAryFatTreeDefaults() {
        LabNetwork net = resolve(TopologySpec.fatTree(4, null, null, null, null));
        // k=4: 4 pods x 2 ToRs x 2 hosts = 16 hosts, 8 ToR + 8 aggregation + 4 core switches.
        assertThat(net.hosts()).hasSize(16);
        assertThat(net.nodes().stream().filter(n -> !n.host())).hasSize(20);
        assertThat(net.links()).hasSize(16 + 16 + 16);
    }

    @Test
    void leafSpineAndDumbbell() {
        LabNetwork ls =
                resolve(TopologySpec.leafSpine(4, 2, 8, null, new LinkSpec(400.0, null, null, null, null, null)));
        assertThat(ls.hosts()).hasSize(32);
        assertThat(ls.links()).hasSize(32 + 8);
        assertThat(ls.path(0, 31)).extracting(LinkSpec::rateGbps).containsExactly(100.0, 400.0, 400.0, 100.0);
        LabNetwork db = resolve(TopologySpec.dumbbell(3, 2, null, new LinkSpec(10.0, 5000L, null, null, null, null)));
        assertThat(db.hosts()).hasSize(5);
        List<LinkSpec> p = db.path(0, 4);
        assertThat(p).hasSize(3);
        assertThat(p.get(1).rateGbps()).isEqualTo(10.0);
        assertThat(p.get(1).delayNs()).isEqualTo(5000L);
    }

    @Test
    void workloadsJoinEnisOfOneVpcOnly() {
        String head = "{\"name\":\"v\",\"vpcs\":[{\"name\":\"a\",\"vni\":100,\"cidr\":\"10.0.0.0/16\"},"
                + "{\"name\":\"b\",\"vni\":200,\"cidr\":\"10.1.0.0/16\"}],"
                + "\"topology\":{\"type\":\"star\",\"hosts\":3},"
                + "\"hosts\":[{\"name\":\"h2\",\"enis\":[{\"name\":\"eni0\",\"vpc\":\"b\"}]}],";
        Lab crossFlow = LabLoader.parse(
                head + "\"workloads\":[{\"type\":\"flows\",\"flows\":[{\"src\":\"h0\",\"dst\":\"h1\",\"bytes\":1},"
                        + "{\"src\":\"h0\",\"dst\":\"h2\",\"bytes\":1}]}]}",
                false);
        assertThatThrownBy(() -> TopologyGenerator.resolve(crossFlow))
                .isInstanceOfSatisfying(
                        LabException.class, e -> assertThat(e.path()).isEqualTo("workloads[0].flows[1].dst"))
                .hasMessageContaining("h2/eni0 is in VPC b, h0/eni0 in VPC a");
        Lab poissonEverywhere = LabLoader.parse(
                head + "\"workloads\":[{\"type\":\"poisson\",\"cdf\":\"websearch\",\"load\":0.3}]}", false);
        assertThatThrownBy(() -> TopologyGenerator.resolve(poissonEverywhere))
                .isInstanceOfSatisfying(
                        LabException.class, e -> assertThat(e.path()).isEqualTo("workloads[0].hosts"))
                .hasMessageContaining("list the hosts of one VPC in hosts");
        Lab incastAcross = LabLoader.parse(
                head + "\"workloads\":[{\"type\":\"incast\",\"receiver\":\"h0\",\"senderCount\":2,\"flowBytes\":1}]}",
                false);
        assertThatThrownBy(() -> TopologyGenerator.resolve(incastAcross))
                .isInstanceOfSatisfying(
                        LabException.class, e -> assertThat(e.path()).isEqualTo("workloads[0].senderCount"))
                .hasMessageContaining("h0/eni0 in VPC a");
        Lab oneVpc = LabLoader.parse(
                head
                        + "\"workloads\":[{\"type\":\"poisson\",\"cdf\":\"websearch\",\"load\":0.3,\"hosts\":[\"h0\",\"h1\"]},"
                        + "{\"type\":\"perftest\",\"test\":\"writeBw\",\"client\":\"h1\",\"server\":\"h0\"}]}",
                false);
        assertThat(TopologyGenerator.resolve(oneVpc).hosts()).hasSize(3);
    }
}
