package org.vrdma.harness.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.vrdma.harness.backend.HostBackend;
import org.vrdma.harness.backend.LabHost;
import org.vrdma.harness.backend.LabProcesses;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.TransferOptions;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;

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

    @Test
    @VrdmaLab(value = "leaf-spine-cc.yaml", backend = "virtual")
    void aVirtualTimeLabFileRunsItsWorkloadsThroughALabRun(LabRun run) {
        // Next to this class on the class path, with the CDF file it names beside it.
        assertThat(run.backend()).isEqualTo("virtual");
        assertThat(run.hosts()).hasSize(6);
        assertThat(run.eni("h0").spec().cc().algorithm()).isEqualTo("hpcc");
        LabResults r = run.run(RunProgress.NONE);
        assertThat(r.counters().flowsStarted()).isGreaterThan(4);
        assertThat(r.counters().flowsFinished()).isEqualTo(r.counters().flowsStarted());
        assertThat(r.flows()).filteredOn(f -> f.workload().equals("w0")).allMatch(f -> f.bytes() <= 65_536);
        assertThat(r.fctBuckets()).isNotEmpty();
    }

    @Test
    void realTimeHostsOnTheVirtualBackendSayWhatToTakeInstead() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(LabFixtures.HostsOnVirtual.class))
                .execute();
        results.testEvents().assertStatistics(s -> s.started(1).failed(1));
        Throwable failure = LabFixtures.firstFailure(results);
        assertThat(failure)
                .isInstanceOf(org.junit.jupiter.api.extension.ParameterResolutionException.class)
                .hasMessageContaining("virtual backend has no real-time hosts")
                .hasMessageContaining("take a LabRun");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"embedded", "netns", "docker"})
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aFailingTestBodyStillTearsItsLabDown(String backend) throws Exception {
        LabFixtures.DeliberatelyFailing.labId = null;
        String before = System.getProperty(VrdmaLabExtension.BACKEND_PROPERTY);
        System.setProperty(VrdmaLabExtension.BACKEND_PROPERTY, backend);
        EngineExecutionResults results;
        try {
            results = EngineTestKit.engine("junit-jupiter")
                    .selectors(selectClass(LabFixtures.DeliberatelyFailing.class))
                    .execute();
        } finally {
            if (before == null) {
                System.clearProperty(VrdmaLabExtension.BACKEND_PROPERTY);
            } else {
                System.setProperty(VrdmaLabExtension.BACKEND_PROPERTY, before);
            }
        }
        results.testEvents().assertStatistics(s -> s.started(1).failed(1).succeeded(0));
        Throwable failure = LabFixtures.firstFailure(results);
        String id = LabFixtures.DeliberatelyFailing.labId;
        assertThat(id)
                .isNotNull()
                .startsWith(
                        RunningLab.idPrefix() + "-" + ProcessHandle.current().pid() + "-");
        // The test's own failure, not a teardown error: cleanup succeeded and found nothing left.
        assertThat(failure).isInstanceOf(AssertionError.class).hasMessage("deliberate failure in lab " + id);
        assertThat(failure.getSuppressed()).isEmpty();
        if (!backend.equals("embedded")) {
            assertThat(LabFixtures.DeliberatelyFailing.whileUp)
                    .as("the lab existed during the test")
                    .isNotEmpty();
        }
        List<String> after = new ArrayList<>(HostBackend.byName(backend).leftovers(id));
        after.addAll(LabProcesses.withLabPrefix(id));
        assertThat(after).isEmpty();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theBuilderConfiguresTheLab() {
        EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(LabFixtures.Programmatic.class))
                .execute();
        results.testEvents().assertStatistics(s -> s.started(1).succeeded(1));
    }
}
