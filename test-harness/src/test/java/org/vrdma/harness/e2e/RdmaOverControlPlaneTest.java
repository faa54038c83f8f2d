package org.vrdma.harness.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.agent.HostAgent;
import org.vrdma.control.agent.vswitch.VSwitchMapping;
import org.vrdma.control.agent.vswitch.VSwitchProgrammer;
import org.vrdma.control.agent.vswitch.VnicAttachments;
import org.vrdma.control.api.Controller;
import org.vrdma.control.client.ControlClient;
import org.vrdma.harness.perf.PerftestSuite;
import org.vrdma.harness.perf.RdmaEndpoint;
import org.vrdma.harness.perf.RealTimeTwoHostLab;
import org.vrdma.harness.perf.TwoHostLab;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.WrOpcode;
import org.vrdma.vswitch.pipeline.DropReason;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * The whole stack through the control plane only: a controller over HTTP and two host agents
 * program real vSwitches; a VPC with two vRDMA ENIs on two hosts is made through the REST API; the
 * vNICs the agents attach to those ENIs run RDMA WRITE over the Geneve overlay. A security-group
 * rule denying RoCEv2 stops the traffic (drops counted, the QP fails with RETRY_EXC_ERR as on
 * hardware); removing the rule lets a new connection through again.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RdmaOverControlPlaneTest {
    private static final long CONVERGE_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long RUN_NS = TimeUnit.SECONDS.toNanos(60);

    @TempDir
    Path dir;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private EventLoopGroup group;
    private Controller controller;
    private ControlClient api;

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closeables.reversed()) {
            c.close();
        }
        if (api != null) {
            api.close();
        }
        if (controller != null) {
            controller.close();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void rdmaWriteFlowsUntilASecurityGroupDeniesRoceAndFlowsAgainWhenTheRuleGoes() throws Exception {
        group = NettyRuntime.best().newEventLoopGroup(2, "e2e");
        VSwitchHost switchA = VSwitchHost.start(group, NettyRuntime.best(), VSwitchHost.Options.loopback("a"));
        closeables.add(switchA);
        VSwitchHost switchB = VSwitchHost.start(group, NettyRuntime.best(), VSwitchHost.Options.loopback("b"));
        closeables.add(switchB);
        controller = Controller.start(dir.resolve("data"), "127.0.0.1", 0);
        api = new ControlClient(controller.endpoint(), controller.token());
        TransportConfig transport = TransportConfig.defaults().withRto(1_000_000, 2_000_000);
        VnicAttachments vnicsA = new VnicAttachments(switchA, transport);
        VnicAttachments vnicsB = new VnicAttachments(switchB, transport);
        String hostA = register("a", switchA);
        String hostB = register("b", switchB);
        VSwitchProgrammer programmerB = new VSwitchProgrammer(switchB, vnicsB);
        closeables.add(new HostAgent(
                controller.endpoint(), controller.token(), hostA, new VSwitchProgrammer(switchA, vnicsA)));
        closeables.add(new HostAgent(controller.endpoint(), controller.token(), hostB, programmerB));

        String vpc = post("/v1/vpcs", Map.of("name", "rdma", "cidr", "10.8.0.0/16"))
                .path("id")
                .asText();
        String subnet = post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.8.1.0/24"))
                .path("id")
                .asText();
        String sg = post(
                        "/v1/security-groups",
                        Map.of(
                                "vpcId",
                                vpc,
                                "rules",
                                List.of(
                                        Map.of("direction", "ingress", "protocol", "all", "cidr", "10.8.0.0/16"),
                                        Map.of("direction", "egress", "protocol", "all", "cidr", "10.8.0.0/16"))))
                .path("id")
                .asText();
        JsonNode eniA = post(
                "/v1/enis",
                Map.of("subnetId", subnet, "hostId", hostA, "vrdma", true, "securityGroupIds", List.of(sg)));
        JsonNode eniB = post(
                "/v1/enis",
                Map.of("subnetId", subnet, "hostId", hostB, "vrdma", true, "securityGroupIds", List.of(sg)));
        String idA = eniA.path("id").asText();
        String idB = eniB.path("id").asText();
        await("vNICs attached on both hosts", () -> vnicsA.device(idA) != null && vnicsB.device(idB) != null);

        AttachedLab lab = new AttachedLab(switchA, vnicsA.device(idA), eniA, switchB, vnicsB.device(idB), eniB);
        closeables.add(lab);
        // Routes may land a moment after the ports: the first transfer waits for them.
        PerftestSuite suite = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 32, RUN_NS);
        PerftestSuite.BandwidthRow before = suite.bandwidth(WrOpcode.RDMA_WRITE, 65536, 200);
        assertThat(before.intact()).isTrue();
        assertThat(before.iterations()).isEqualTo(200);

        long deniedBefore = switchB.<Long>call(vs -> vs.counters().drops(DropReason.SECURITY_GROUP_DENY));
        JsonNode withDeny = post(
                "/v1/security-groups/" + sg + "/rules",
                Map.of(
                        "direction",
                        "ingress",
                        "protocol",
                        "udp",
                        "cidr",
                        "10.8.0.0/16",
                        "fromPort",
                        4791,
                        "toPort",
                        4791,
                        "action",
                        "deny"));
        String denyRule = null;
        for (JsonNode r : withDeny.path("rules")) {
            if ("deny".equals(r.path("action").asText())) {
                denyRule = r.path("id").asText();
            }
        }
        assertThat(denyRule).isNotNull();
        int portB = programmerB.portId(idB);
        await(
                "deny rule on switch B",
                () -> switchB.call(vs -> vs.eni(portB).config().securityGroup().ingressRules().stream()
                        .anyMatch(r -> !r.allow())));

        assertThatThrownBy(() -> suite.bandwidth(WrOpcode.RDMA_WRITE, 65536, 200))
                .hasMessageContaining("RETRY_EXC_ERR");
        long denied = switchB.<Long>call(vs -> vs.counters().drops(DropReason.SECURITY_GROUP_DENY)) - deniedBefore;
        assertThat(denied).as("RoCEv2 packets dropped by the security group").isPositive();

        assertThat(api.delete("/v1/security-groups/" + sg + "/rules/" + denyRule)
                        .ok())
                .isTrue();
        await(
                "deny rule gone from switch B",
                () -> switchB.call(vs -> vs.eni(portB).config().securityGroup().ingressRules().stream()
                        .allMatch(r -> r.allow())));
        PerftestSuite again = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 32, RUN_NS);
        PerftestSuite.BandwidthRow after = again.bandwidth(WrOpcode.RDMA_WRITE, 65536, 200);
        assertThat(after.intact()).isTrue();
        System.out.printf(
                "e2e over the control plane: WRITE 64 KiB %.2f Gbit/s before, denied %d packets, %.2f Gbit/s after%n",
                before.gbps(), denied, after.gbps());
    }

    private String register(String name, VSwitchHost host) throws Exception {
        long a = host.underlayAddress();
        return post(
                        "/v1/hosts",
                        Map.of(
                                "name", name,
                                "underlayIp", UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(a)),
                                "underlayPort", UnderlayAddress.port(a)))
                .path("id")
                .asText();
    }

    private JsonNode post(String path, Object body) throws Exception {
        ControlClient.Response r = api.post(path, body);
        assertThat(r.ok()).as(r.body()).isTrue();
        return r.json();
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + CONVERGE_NS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            LockSupport.parkNanos(2_000_000);
        }
    }

    /** The two vNICs the control plane attached, as a {@link TwoHostLab} for the perftest workloads. */
    private static final class AttachedLab implements TwoHostLab {
        private final VSwitchHost hostA;
        private final VSwitchHost hostB;
        private final RdmaEndpoint a;
        private final RdmaEndpoint b;
        private final JsonNode eniA;
        private final JsonNode eniB;

        AttachedLab(
                VSwitchHost hostA, Device deviceA, JsonNode eniA, VSwitchHost hostB, Device deviceB, JsonNode eniB) {
            this.hostA = hostA;
            this.hostB = hostB;
            this.eniA = eniA;
            this.eniB = eniB;
            this.a = hostA.call(vs -> new RdmaEndpoint(deviceA, PooledByteBufAllocator.DEFAULT, 1 << 20));
            this.b = hostB.call(vs -> new RdmaEndpoint(deviceB, PooledByteBufAllocator.DEFAULT, 1 << 20));
        }

        @Override
        public RdmaEndpoint a() {
            return a;
        }

        @Override
        public RdmaEndpoint b() {
            return b;
        }

        @Override
        public <T> T onA(Supplier<T> action) {
            return hostA.call(vs -> action.get());
        }

        @Override
        public <T> T onB(Supplier<T> action) {
            return hostB.call(vs -> action.get());
        }

        @Override
        public boolean await(BooleanSupplier done, long timeoutNs) {
            return RealTimeTwoHostLab.awaitWallClock(done, timeoutNs);
        }

        @Override
        public void faults(FaultConfig data, FaultConfig control) {
            throw new UnsupportedOperationException("not used here");
        }

        @Override
        public TransportCounters transportCounters() {
            return onA(() -> a.device().counters());
        }

        @Override
        public long ecnMarks() {
            return 0;
        }

        @Override
        public long injectedLosses() {
            return 0;
        }

        @Override
        public int ipv4A() {
            return UnderlayAddress.parseIpv4(eniA.path("ip").asText());
        }

        @Override
        public long macA() {
            return VSwitchMapping.mac(eniA.path("mac").asText());
        }

        @Override
        public int ipv4B() {
            return UnderlayAddress.parseIpv4(eniB.path("ip").asText());
        }

        @Override
        public long macB() {
            return VSwitchMapping.mac(eniB.path("mac").asText());
        }

        @Override
        public String describe() {
            return "two vNICs attached by the control plane";
        }

        @Override
        public void close() {
            onA(() -> {
                a.close();
                return null;
            });
            onB(() -> {
                b.close();
                return null;
            });
        }
    }
}
