package org.vrdma.harness.junit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.vrdma.harness.backend.LabHost;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.TransferOptions;

/**
 * Test classes that {@link VrdmaLabExtensionTest} runs through the JUnit Platform test kit; not
 * tests of their own (the name matches none of Surefire's patterns).
 */
final class LabFixtures {
    /** What the first failed test of a fixture run threw. */
    static Throwable firstFailure(EngineExecutionResults results) {
        return results.testEvents()
                .failed()
                .list()
                .getFirst()
                .getRequiredPayload(TestExecutionResult.class)
                .getThrowable()
                .orElseThrow();
    }

    private LabFixtures() {}

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

    /** A verbs context asked for on the netns backend: a clear resolution error, nothing left behind. */
    static class HostsOnVirtual {
        @Test
        @VrdmaLab(hosts = 2, backend = "virtual")
        void wantsHosts(LabHost a) {
            assertThat(a).isNotNull();
        }
    }

    static class ContextOnNetns {
        @Test
        @VrdmaLab(hosts = 2, backend = "netns")
        void wantsAContext(org.vrdma.verbs.IbvContext ctx) {
            throw new AssertionError("not reached: " + ctx);
        }
    }
}
