package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.report.LabRunner;

/** The real-time backends behind the lab SPI: registered by name, running a lab file's perftests. */
class RealTimeLabRunTest {
    @Test
    void theRealTimeBackendsAreRegisteredByName() {
        assertThat(LabBackends.names()).contains("embedded", "netns", "docker", "virtual");
        assertThat(LabBackends.get("embedded").unavailableReason()).isNull();
        assertThat(LabBackends.get("netns")).isInstanceOf(NetnsBackend.class);
        assertThat(LabBackends.get("docker").description()).contains("container per host");
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void theTwoHostLabFileRunsItsPerftestsInRealTimeEveryByteChecked() {
        Lab lab = LabLoader.load(Path.of("labs/two-hosts.json"));
        LabResults results;
        String id;
        try (LabRun run = LabBackends.get("embedded").start(lab)) {
            id = ((RealTimeLabRun) run).runningLab().id();
            assertThat(run.hosts()).hasSize(2);
            assertThat(run.eni("h0").spec().vni()).isEqualTo(100);
            assertThatThrownBy(() -> run.eni("h0").device()).isInstanceOf(LabException.class);
            results = run.run(RunProgress.NONE);
        }
        assertThat(results.backend()).isEqualTo("embedded");
        List<LabResults.PerftestResult> p = results.perftests();
        assertThat(p).extracting(LabResults.PerftestResult::test).containsExactly("writeBw", "readBw", "sendLat");
        assertThat(p.get(0).verifiedBytes()).isEqualTo(200L * 65536);
        assertThat(p.get(0).gbps()).isPositive();
        assertThat(p.get(1).verifiedBytes()).isEqualTo(200L * 65536);
        assertThat(p.get(2).latencyP50Us()).isPositive();
        assertThat(p.get(2).latencyP99Us()).isGreaterThanOrEqualTo(p.get(2).latencyP50Us());
        // The lab asks to verify the SEND ping-pong too, which the real-time path does not check.
        assertThat(p.get(2).verifiedBytes()).isZero();
        assertThat(results.notes()).anyMatch(n -> n.startsWith("sendLat payloads are not checked"));
        assertThat(results.counters().bytesDelivered()).isEqualTo(200L * 65536 + 200L * 65536 + 1000L * 64);
        // Read from the perftest clients' counter lines (a format the parser missed would leave 0).
        assertThat(results.counters().txPackets()).isPositive();
        assertThat(results.counters().spuriousTimeouts())
                .isBetween(0L, results.counters().timeouts());
        assertThat(LabProcesses.withLabPrefix(id)).isEmpty();
        assertThat(new EmbeddedBackend().leftovers(id)).isEmpty();
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void labRunWritesResultsAndTheReportForARealTimeRun(@TempDir Path dir) throws Exception {
        Lab lab = LabLoader.parse("""
                {"name": "rt", "topology": {"type": "pair"},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                                "sizeBytes": 65536, "iterations": 64, "verify": true}]}
                """, false);
        var outcomes = new LabRunner(
                        LabBackends.get("embedded"), dir, new PrintStream(OutputStream.nullOutputStream()), false, true)
                .run(lab);
        assertThat(outcomes).hasSize(1);
        assertThat(outcomes.getFirst().results().perftests().getFirst().verifiedBytes())
                .isEqualTo(64L * 65536);
        String json = Files.readString(dir.resolve("results.json"));
        assertThat(json)
                .containsPattern("\"backend\"\\s*:\\s*\"embedded\"")
                .containsPattern("\"verifiedBytes\"\\s*:\\s*4194304");
        assertThat(dir.resolve("report.html")).exists();
    }

    @Test
    void perQpCongestionControlOtherThanTheEnisIsAClearError() throws Exception {
        Lab lab = LabLoader.parse("""
                {"name": "percc", "topology": {"type": "star", "hosts": 2},
                 "workloads": [{"type": "poisson", "cdf": "websearch", "load": 0.3, "cc": {"algorithm": "hpcc"}}]}
                """, false);
        // Before any host comes up (on docker that is seconds of container start), and nothing is left.
        String prefix = RunningLab.idPrefix() + "-" + ProcessHandle.current().pid() + "-";
        for (String backend : List.of("embedded", "netns")) {
            assertThatThrownBy(() -> LabBackends.get(backend).start(lab))
                    .as(backend)
                    .isInstanceOf(LabException.class)
                    .hasMessageContaining("workloads[0].cc")
                    .hasMessageContaining("one algorithm");
        }
        assertThat(LabProcesses.withLabPrefix(prefix)).isEmpty();
        assertThat(Commands.run("ip", "netns", "list")).doesNotContain(prefix);
    }
}
