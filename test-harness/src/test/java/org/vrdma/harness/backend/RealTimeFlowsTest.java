package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.report.LabRunner;
import org.vrdma.harness.lab.report.ResultsWriter;

/**
 * Flow workloads (incast, all-to-all, Poisson with a CDF, explicit flows) on the real-time
 * backends, over the Java verbs API: every planned flow runs and finishes, and the results have
 * the virtual backend's layout (per-flow FCT and slowdown, buckets, counters, throughput, CSV,
 * report).
 */
class RealTimeFlowsTest {
    /** Four hosts, about a hundred flows, done in a few seconds of real time. */
    static final String LAB = """
            {"name": "rt-flows", "seed": 3, "durationUs": 100000, "drainUs": 30000000,
             "topology": {"type": "star", "hosts": 4, "hostLink": {"rateGbps": 1}},
             "cc": {"algorithm": "dcqcn"},
             "workloads": [
               {"type": "incast", "receiver": "h0", "senderCount": 3, "flowBytes": 65536, "rounds": 10, "intervalUs": 5000},
               {"type": "allToAll", "flowBytes": 32768, "startUs": 60000},
               {"type": "poisson", "cdf": "fbHadoop", "load": 0.1, "stopUs": 40000},
               {"type": "flows", "flows": [
                 {"src": "h1", "dst": "h2", "bytes": 2097152, "startUs": 20000},
                 {"src": "h3", "dst": "h2", "bytes": 2097152, "startUs": 20000}]}
             ]}
            """;

    static void assertFlowRun(List<LabRunner.Outcome> outcomes, Path dir, String backend) throws Exception {
        assertFlowRun(outcomes.getFirst().results(), dir, backend);
    }

    static void assertFlowRun(LabResults r, Path dir, String backend) throws Exception {
        assertThat(r.backend()).isEqualTo(backend);
        Map<String, Long> perWorkload = r.flows().stream()
                .collect(Collectors.groupingBy(LabResults.FlowResult::workload, Collectors.counting()));
        assertThat(perWorkload.get("w0")).as(perWorkload + " " + r.notes()).isEqualTo(30L); // 3 senders x 10 rounds
        assertThat(perWorkload.get("w1")).isEqualTo(12L); // 4 x 3
        assertThat(perWorkload.get("w3")).isEqualTo(2L);
        assertThat(perWorkload.get("w2")).as(perWorkload + " " + r.notes()).isPositive();
        for (LabResults.FlowResult f : r.flows()) {
            assertThat(f.unfinished()).as("flow %d", f.id()).isNull();
            assertThat(f.endNs()).isGreaterThan(f.startNs());
            assertThat(f.fctNs()).isEqualTo(f.endNs() - f.startNs());
            assertThat(f.idealFctNs()).isPositive();
            assertThat(f.slowdown()).isPositive();
            assertThat(f.cc()).isEqualTo("dcqcn");
        }
        // Incast rounds are 5 ms apart and an agent never starts a flow before its planned time
        // (it may start late on a loaded machine, so lateness is not bounded here). Since every
        // start is at or after its own round's time, the k-th earliest start is at or after round
        // k / 3's time: a workload that ignored the interval fails this.
        long[] incastStarts = r.flows().stream()
                .filter(f -> f.workload().equals("w0"))
                .mapToLong(LabResults.FlowResult::startNs)
                .sorted()
                .toArray();
        for (int k = 0; k < incastStarts.length; k++) {
            assertThat(incastStarts[k]).as("incast start %d", k).isGreaterThanOrEqualTo(k / 3 * 5_000_000L);
        }
        assertThat(r.counters().flowsStarted()).isEqualTo(r.flows().size());
        assertThat(r.counters().flowsFinished()).isEqualTo(r.flows().size());
        assertThat(r.counters().bytesDelivered())
                .isEqualTo(r.flows().stream()
                        .mapToLong(LabResults.FlowResult::bytes)
                        .sum());
        assertThat(r.counters().txPackets()).isPositive();
        assertThat(r.counters().spuriousTimeouts()).isBetween(0L, r.counters().timeouts());
        assertThat(r.fctBuckets()).isNotEmpty();
        assertThat(r.throughput().series().getFirst().values()).isNotEmpty();
        assertThat(java.util.Arrays.stream(r.throughput().series().getFirst().values())
                        .max()
                        .orElse(0))
                .isPositive();
        List<String> csv = Files.readAllLines(dir.resolve("flows.csv"));
        assertThat(csv.getFirst()).endsWith(",cc,unfinished");
        assertThat(csv).hasSize(r.flows().size() + 1);
        assertThat(dir.resolve("fct.csv")).exists();
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void flowWorkloadsRunOnTheEmbeddedBackendOverTheVerbsApi(@TempDir Path dir) throws Exception {
        Lab lab = LabLoader.parse(LAB, false);
        var outcomes = new LabRunner(
                        LabBackends.get("embedded"), dir, new PrintStream(OutputStream.nullOutputStream()), false, true)
                .run(lab);
        assertFlowRun(outcomes, dir, "embedded");
        assertThat(Files.readString(dir.resolve("report.html"))).contains("ideal FCT measured");
    }

    /**
     * The same lab on the netns backend: one namespace and one agent JVM per host, the flows over
     * the veth links; nothing of the lab is left afterwards (namespaces, processes).
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void flowWorkloadsRunOnTheNetnsBackend(@TempDir Path dir) throws Exception {
        Lab lab = LabLoader.parse(LAB, false);
        NetnsBackend netns = (NetnsBackend) LabBackends.get("netns");
        LabResults r;
        String id;
        try (LabRun run = netns.start(lab)) {
            id = ((RealTimeLabRun) run).runningLab().id();
            assertThat(netns.leftovers(id)).isNotEmpty(); // the namespaces exist while it runs
            r = run.run(RunProgress.NONE);
        }
        ResultsWriter.write(r, dir);
        assertFlowRun(r, dir, "netns");
        assertThat(LabBackendsTest.leftovers(netns, id)).isEmpty();
    }
}
