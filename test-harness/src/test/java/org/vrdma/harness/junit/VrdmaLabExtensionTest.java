package org.vrdma.harness.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.vrdma.harness.backend.HostBackend;
import org.vrdma.harness.backend.LabHost;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.LabProcesses;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.TransferOptions;

/** The JUnit 5 extension, as users' tests use it, and its cleanup after a failing test body. */
class VrdmaLabExtensionTest {
    @Test
    @VrdmaLab(hosts = 2)
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aTestGetsARunningLabAndItsHostsInjected(RunningLab lab, LabHost a, LabHost b) throws Exception {
        assertThat(lab.backend()).isEqualTo("embedded");
        assertThat(List.of(a.name(), b.name())).containsExactly("h1", "h2");
        assertThat(a.eniIpv4()).isEqualTo("10.100.0.1");
        lab.transfer(a, b, TransferOptions.verifiedWrite(8 << 20)).assertByteExact();
    }

    @Test
    @VrdmaLab(hosts = 3)
    void hostsCanBeNamed(@VrdmaLab.Host("h3") LabHost third, LabHost first) {
        assertThat(third.name()).isEqualTo("h3");
        assertThat(first.name()).isEqualTo("h1");
    }

    @Test
    @VrdmaLab("labs/two-hosts.json")
    void aLabFileGivesTheHosts(RunningLab lab, LabHost h0, LabHost h1) {
        assertThat(lab.plan().name()).isEqualTo("two-hosts");
        assertThat(List.of(h0.name(), h1.name())).containsExactly("h0", "h1");
        assertThat(h0.vni()).isEqualTo(100);
        assertThat(h0.eniIpv4()).isNotEqualTo(h1.eniIpv4());
    }

    /** Run only through the test kit below: its body fails on purpose after the lab came up. */
    static class DeliberatelyFailing {
        static volatile String labId;
        static volatile List<String> whileUp;

        @Test
        @VrdmaLab(hosts = 2)
        void fails(RunningLab lab) throws Exception {
            labId = lab.id();
            whileUp = lab.leftovers();
            throw new AssertionError("deliberate failure in lab " + lab.id());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"embedded", "netns", "docker"})
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aFailingTestBodyStillTearsItsLabDown(String backend) throws Exception {
        DeliberatelyFailing.labId = null;
        String before = System.getProperty(VrdmaLabExtension.BACKEND_PROPERTY);
        System.setProperty(VrdmaLabExtension.BACKEND_PROPERTY, backend);
        EngineExecutionResults results;
        try {
            results = EngineTestKit.engine("junit-jupiter")
                    .selectors(selectClass(DeliberatelyFailing.class))
                    .execute();
        } finally {
            if (before == null) {
                System.clearProperty(VrdmaLabExtension.BACKEND_PROPERTY);
            } else {
                System.setProperty(VrdmaLabExtension.BACKEND_PROPERTY, before);
            }
        }
        results.testEvents().assertStatistics(s -> s.started(1).failed(1).succeeded(0));
        Throwable failure = results.testEvents()
                .failed()
                .list()
                .getFirst()
                .getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
                .getThrowable()
                .orElseThrow();
        String id = DeliberatelyFailing.labId;
        assertThat(id)
                .isNotNull()
                .startsWith(
                        RunningLab.idPrefix() + "-" + ProcessHandle.current().pid() + "-");
        // The test's own failure, not a teardown error: cleanup succeeded and found nothing left.
        assertThat(failure).isInstanceOf(AssertionError.class).hasMessage("deliberate failure in lab " + id);
        assertThat(failure.getSuppressed()).isEmpty();
        if (!backend.equals("embedded")) {
            assertThat(DeliberatelyFailing.whileUp)
                    .as("the lab existed during the test")
                    .isNotEmpty();
        }
        List<String> after = new ArrayList<>(HostBackend.byName(backend).leftovers(id));
        after.addAll(LabProcesses.withLabPrefix(id));
        assertThat(after).isEmpty();
    }

    /** The programmatic form, with a plan of its own. */
    static class Programmatic {
        @RegisterExtension
        static final VrdmaLabExtension LAB = VrdmaLabExtension.builder()
                .backend("embedded")
                .plan(new LabPlan(
                        "pair",
                        7,
                        List.of(
                                new LabPlan.HostPlan("client", "192.168.7.10"),
                                new LabPlan.HostPlan("server", "192.168.7.20"))))
                .build();

        @Test
        void moves(RunningLab lab, LabHost client, LabHost server) throws Exception {
            assertThat(client.name()).isEqualTo("client");
            assertThat(server.vni()).isEqualTo(7);
            lab.transfer(client, server, TransferOptions.verifiedWrite(4 << 20)).assertByteExact();
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theBuilderConfiguresTheLab() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(Programmatic.class))
                .execute();
        results.testEvents().assertStatistics(s -> s.started(1).succeeded(1));
    }
}
