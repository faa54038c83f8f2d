package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Testcontainers backend brings up a three-host VPC: three containers on the lab's Docker
 * network, each host's vSwitch on its container's address, and verified RDMA WRITEs around the
 * ring h1 -> h2 -> h3 -> h1. Needs a Docker engine (./test.sh starts one); fails
 * without it, it does not skip.
 */
class DockerVpcTest {
    private static final long BYTES = 8L << 20;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void threeContainersFormAVpcAndEveryHostWritesToTheNextByteExact() throws Exception {
        HostBackend docker = HostBackend.byName("docker");
        String ours = RunningLab.idPrefix() + "-" + ProcessHandle.current().pid() + "-";
        assertThat(docker.leftovers(ours)).isEmpty();
        RunningLab lab = RunningLab.start(docker, LabPlan.hosts("vpc3", 3));
        List<Transfer> ring;
        List<String> whileUp;
        try {
            List<LabHost> h = lab.hosts();
            Set<String> underlay = new HashSet<>();
            for (LabHost host : h) {
                underlay.add(host.underlayIp());
            }
            assertThat(underlay).as("one container address per host").hasSize(3);
            whileUp = docker.leftovers(lab.id());
            // Around the ring one after the other: several host JVMs starting at once on two busy
            // cores can starve a QP past its retries (RETRY_EXC_ERR).
            ring = List.of(
                    lab.transfer(h.get(0), h.get(1), TransferOptions.verifiedWrite(BYTES)),
                    lab.transfer(
                            h.get(1),
                            h.get(2),
                            TransferOptions.verifiedWrite(BYTES).withSeed(2)),
                    lab.transfer(
                            h.get(2),
                            h.get(0),
                            TransferOptions.verifiedWrite(BYTES).withSeed(3)));
        } finally {
            lab.close();
        }
        assertThat(whileUp)
                .contains("Docker network " + lab.id())
                .anyMatch(s -> s.startsWith("container /" + lab.id() + "-h1 "))
                .anyMatch(s -> s.startsWith("container /" + lab.id() + "-h2 "))
                .anyMatch(s -> s.startsWith("container /" + lab.id() + "-h3 "))
                .anyMatch(s -> s.startsWith("image " + lab.id() + "-host"));
        for (Transfer t : ring) {
            t.assertByteExact();
            assertThat(t.verifiedBytes()).hasValue(BYTES);
            // The overlay runs between the containers' own addresses, with the ENIs of the VPC.
            assertThat(t.clientOutput())
                    .contains("ENI " + t.from().eniIpv4() + " (VNI 100) on vSwitch on "
                            + t.from().underlayIp())
                    .contains("peer ENI " + t.to().eniIpv4() + " via " + t.to().underlayIp());
        }
        assertThat(docker.leftovers(ours)).isEmpty();
        assertThat(LabProcesses.withLabPrefix(ours)).isEmpty();
    }
}
