package org.vrdma.control.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.api.Controller;
import org.vrdma.control.client.ControlClient;

/**
 * Host agents against a real controller over HTTP, in real time: first sync, incremental updates
 * within a second, and convergence after an agent restart and after a controller restart.
 */
class AgentSyncTest {
    private static final Duration CONVERGE = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private Controller controller;
    private ControlClient api;
    private final List<AutoCloseable> agents = new ArrayList<>();
    private String hostA;
    private String hostB;
    private String eniA;
    private String eniB;
    private String sg;
    private String qos;

    @BeforeEach
    void setUp() throws Exception {
        controller = Controller.start(dir.resolve("data"), "127.0.0.1", 0);
        api = new ControlClient(controller.endpoint(), controller.token());
        hostA = create("/v1/hosts", Map.of("name", "a", "underlayIp", "127.0.0.1", "underlayPort", 16081));
        hostB = create("/v1/hosts", Map.of("name", "b", "underlayIp", "127.0.0.1", "underlayPort", 16082));
        String vpc = create("/v1/vpcs", Map.of("cidr", "10.0.0.0/16"));
        String subnet = create("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.0.1.0/24"));
        qos = create("/v1/qos-policies", Map.of("bandwidthMbps", 10000, "rdmaShare", 70));
        sg = create(
                "/v1/security-groups",
                Map.of(
                        "vpcId",
                        vpc,
                        "rules",
                        List.of(Map.of("direction", "ingress", "protocol", "rdma", "cidr", "10.0.0.0/16"))));
        eniA = create("/v1/enis", Enis.vrdma(subnet, hostA, qos, sg));
        eniB = create("/v1/enis", Enis.vrdma(subnet, hostB, qos, sg));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable a : agents) {
            a.close();
        }
        if (api != null) {
            api.close();
        }
        if (controller != null) {
            controller.close();
        }
    }

    private String create(String path, Object body) throws Exception {
        ControlClient.Response r = api.post(path, body);
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return r.json().path("id").asText();
    }

    private HostAgent agent(String host, InMemoryProgrammer programmer) {
        HostAgent a = new HostAgent(controller.endpoint(), controller.token(), host, programmer);
        agents.add(a);
        return a;
    }

    private void awaitConverged(InMemoryProgrammer p, String host) throws InterruptedException {
        assertThat(controller
                        .publisher()
                        .awaitPublished(controller.service().store().revision(), CONVERGE))
                .isTrue();
        boolean ok = p.await(
                s -> {
                    HostDesiredState want = controller.publisher().state(host);
                    return want != null && s.version() == want.version() && s.sameContent(want);
                },
                CONVERGE);
        assertThat(ok)
                .as(
                        "host %s converged: programmed %s, desired %s",
                        host, p.snapshot(), controller.publisher().state(host))
                .isTrue();
    }

    @Test
    void agentsReceiveTheirStateWithRoutesToTheOtherHost() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        InMemoryProgrammer b = new InMemoryProgrammer();
        agent(hostA, a);
        agent(hostB, b);
        awaitConverged(a, hostA);
        awaitConverged(b, hostB);

        HostDesiredState s = a.snapshot();
        assertThat(s.enis()).containsOnlyKeys(eniA);
        assertThat(s.enis().get(eniA).vrdma()).isTrue();
        assertThat(s.routes()).containsOnlyKeys(eniB);
        RouteConfig toB = s.routes().get(eniB);
        assertThat(toB.underlayPort()).isEqualTo(16082);
        assertThat(toB.remoteHostId()).isEqualTo(hostB);
        assertThat(toB.destination())
                .isEqualTo(api.get("/v1/enis/" + eniB).json().path("ip").asText() + "/32");
        assertThat(toB.vni()).isEqualTo(s.vpcs().values().iterator().next().vni());
        assertThat(s.qosPolicies().get(qos).rdmaShare()).isEqualTo(70);
        assertThat(s.securityGroups().get(sg).rules()).hasSize(1);
        assertThat(a.fullSyncs()).isEqualTo(1);
    }

    @Test
    void securityGroupAndQosChangesReachTheProgrammerWithinOneSecond() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        HostAgent agent = agent(hostA, a);
        awaitConverged(a, hostA);
        long opsBefore = a.incrementalOps();

        // Remove the RDMA rule: the agent must see an empty rule list.
        String ruleId = api.get("/v1/security-groups/" + sg)
                .json()
                .path("rules")
                .get(0)
                .path("id")
                .asText();
        long t0 = System.nanoTime();
        assertThat(api.delete("/v1/security-groups/" + sg + "/rules/" + ruleId).status())
                .isEqualTo(200);
        // Waits up to the convergence limit; the propagation time is printed, not asserted (a
        // wall-clock bound fails whenever a loaded machine stalls the test for a second).
        assertThat(a.await(s -> s.securityGroups().get(sg).rules().isEmpty(), CONVERGE))
                .as("rule removal programmed")
                .isTrue();
        long sgMillis = (System.nanoTime() - t0) / 1_000_000;

        t0 = System.nanoTime();
        assertThat(api.patch("/v1/qos-policies/" + qos, Map.of("bandwidthMbps", 2500))
                        .status())
                .isEqualTo(200);
        assertThat(a.await(s -> s.qosPolicies().get(qos).bandwidthMbps() == 2500, CONVERGE))
                .as("QoS change programmed")
                .isTrue();
        long qosMillis = (System.nanoTime() - t0) / 1_000_000;

        assertThat(a.fullSyncs()).as("changes arrive as deltas, not resyncs").isEqualTo(1);
        assertThat(a.incrementalOps()).isGreaterThan(opsBefore);
        assertThat(agent.deltasApplied()).isGreaterThanOrEqualTo(2);
        awaitConverged(a, hostA);
        System.out.printf("propagation: security-group rule %d ms, QoS %d ms%n", sgMillis, qosMillis);
    }

    @Test
    void anEniMovingBetweenHostsMovesItsPortAndRoutes() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        InMemoryProgrammer b = new InMemoryProgrammer();
        agent(hostA, a);
        agent(hostB, b);
        awaitConverged(a, hostA);
        awaitConverged(b, hostB);
        assertThat(api.patch("/v1/enis/" + eniB, Map.of("hostId", hostA)).status())
                .isEqualTo(200);
        awaitConverged(a, hostA);
        awaitConverged(b, hostB);
        assertThat(a.snapshot().enis()).containsOnlyKeys(eniA, eniB);
        assertThat(a.snapshot().routes()).isEmpty();
        assertThat(b.snapshot().enis()).isEmpty();
        assertThat(b.snapshot().vpcs()).isEmpty();
        assertThat(b.snapshot().securityGroups()).isEmpty();
    }

    @Test
    void aRestartedAgentConvergesByItself() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        HostAgent first = agent(hostA, a);
        awaitConverged(a, hostA);
        first.close();

        // Changes while the agent is down.
        assertThat(api.patch("/v1/qos-policies/" + qos, Map.of("bandwidthMbps", 1234))
                        .status())
                .isEqualTo(200);
        assertThat(api.delete("/v1/enis/" + eniB).status()).isEqualTo(204);

        // A new agent process: an empty data plane that must be programmed from scratch.
        InMemoryProgrammer fresh = new InMemoryProgrammer();
        agent(hostA, fresh);
        awaitConverged(fresh, hostA);
        assertThat(fresh.snapshot().qosPolicies().get(qos).bandwidthMbps()).isEqualTo(1234);
        assertThat(fresh.snapshot().routes()).isEmpty();
    }

    @Test
    void aControllerRestartWithNothingMissedContinuesWithDeltas() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        HostAgent agent = agent(hostA, a);
        awaitConverged(a, hostA);
        int port = controller.port();
        Path data = controller.dataDir();
        api.close();
        controller.close();
        controller = Controller.start(data, "127.0.0.1", port);
        api = new ControlClient(controller.endpoint(), controller.token());
        assertThat(api.patch("/v1/qos-policies/" + qos, Map.of("rdmaShare", 90)).status())
                .isEqualTo(200);
        awaitConverged(a, hostA);
        assertThat(a.snapshot().qosPolicies().get(qos).tcpShare()).isEqualTo(10);
        // The store revision A had is the restarted controller's too: same state, no resync needed.
        assertThat(agent.fullSyncs()).isEqualTo(1);
    }

    @Test
    void aRestartedControllerIsRejoinedWithoutManualSteps() throws Exception {
        InMemoryProgrammer a = new InMemoryProgrammer();
        HostAgent agent = agent(hostA, a);
        awaitConverged(a, hostA);
        long versionBefore = a.version();
        // A write that does not concern host A: the store revision moves past A's version, so the
        // restarted controller (empty journal) cannot bridge the gap with deltas.
        create("/v1/vpcs", Map.of("cidr", "192.168.0.0/16"));
        int port = controller.port();
        Path data = controller.dataDir();
        api.close();
        controller.close();
        controller = null;

        long failuresDeadline = System.nanoTime() + CONVERGE.toNanos();
        while (agent.failures() == 0 && System.nanoTime() < failuresDeadline) {
            Thread.sleep(20);
        }
        assertThat(agent.failures())
                .as("the agent noticed the controller was gone")
                .isPositive();
        controller = Controller.start(data, "127.0.0.1", port);
        api = new ControlClient(controller.endpoint(), controller.token());
        JsonNode rules = api.get("/v1/security-groups/" + sg).json().path("rules");
        assertThat(rules).hasSize(1);
        assertThat(api.post("/v1/security-groups/" + sg + "/rules", Map.of("protocol", "tcp", "fromPort", 22))
                        .status())
                .isEqualTo(201);
        awaitConverged(a, hostA);
        assertThat(a.version()).isGreaterThan(versionBefore);
        assertThat(a.snapshot().securityGroups().get(sg).rules()).hasSize(2);
        assertThat(agent.fullSyncs()).as("resynced in full after the restart").isEqualTo(2);
    }
}
