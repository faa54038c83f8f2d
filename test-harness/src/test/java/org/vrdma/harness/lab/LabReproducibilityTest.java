package org.vrdma.harness.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.report.LabRunner;
import org.vrdma.harness.lab.report.ResultsWriter;

/**
 * Virtual-time labs replay exactly: the same lab and seed give byte-identical results JSON, also
 * when replayed from the results file; congestion shows in the counters; reports are produced.
 */
@ExtendWith(SampledLeakDetection.class)
class LabReproducibilityTest {
    static final String STAR = """
            {
              "name": "star8",
              "seed": 11,
              "durationUs": 300,
              "drainUs": 5000,
              "topology": {"type": "star", "hosts": 8,
                "hostLink": {"rateGbps": 100, "delayNs": 1000, "bufferBytes": 1048576,
                             "ecn": {"kMinBytes": 50000, "kMaxBytes": 200000, "pMax": 0.2}}},
              "cc": {"algorithm": "dcqcn"},
              "workloads": [
                {"type": "poisson", "cdf": "websearch", "load": 0.5},
                {"type": "incast", "receiver": "h0", "senderCount": 7, "flowBytes": 200000, "startUs": 50}
              ]
            }
            """;

    private static String run(Lab lab) {
        try (LabRun r = LabBackends.get("virtual").start(lab)) {
            return ResultsWriter.json(r.run(RunProgress.NONE));
        }
    }

    @Test
    void aUserCdfNextToTheLabFileIsFoundAndTheResultsReplayWithoutIt(@TempDir Path dir) throws Exception {
        // As a user writes it: the lab names its CDF file relative to itself, and is run from
        // another working directory.
        Path labs = Files.createDirectories(dir.resolve("labs"));
        Files.writeString(labs.resolve("sizes.cdf"), "# mine\n0 0\n4096 50\n65536 90\n1048576 100\n");
        Path file = labs.resolve("mine.yaml");
        Files.writeString(file, """
                name: mine
                seed: 5
                durationUs: 200
                drainUs: 5000
                topology: {type: star, hosts: 4}
                workloads:
                  - {type: poisson, cdf: sizes.cdf, load: 0.5}
                """);
        Lab lab = LabLoader.load(file);
        WorkloadSpec.Poisson p = (WorkloadSpec.Poisson) lab.workloads().getFirst();
        assertThat(p.cdf()).isEqualTo("sizes.cdf");
        assertThat(p.cdfPoints()).hasSize(4);
        String first = run(lab);
        LabResults r = LabLoader.json().readValue(first, LabResults.class);
        assertThat(r.flows()).isNotEmpty().allMatch(f -> f.bytes() <= 1_048_576);
        assertThat(LabLoader.parse(LabLoader.toJson(lab), false)).isEqualTo(lab); // the lab as run, by value
        // The file changes (or is gone): the results file still replays the run byte for byte.
        Files.writeString(labs.resolve("sizes.cdf"), "0 0\n10 100\n");
        Path results = dir.resolve("results.json");
        Files.writeString(results, first);
        assertThat(run(LabLoader.load(results))).isEqualTo(first);
        Files.delete(labs.resolve("sizes.cdf"));
        assertThat(run(LabLoader.load(results))).isEqualTo(first);
        // A file that is nowhere is an error naming the field and where it was looked for.
        assertThatThrownBy(() -> LabLoader.load(file))
                .isInstanceOf(LabException.class)
                .hasMessageContaining("workloads[0].cdf")
                .hasMessageContaining("sizes.cdf")
                .hasMessageContaining(labs.toString());
    }

    @Test
    void sameSeedGivesByteIdenticalJson() throws Exception {
        Lab lab = LabLoader.parse(STAR, false);
        String first = run(lab);
        String second = run(lab);
        assertThat(second).isEqualTo(first);
        LabResults r = LabLoader.json().readValue(first, LabResults.class);
        LabResults.Counters c = r.counters();
        assertThat(c.flowsStarted()).isGreaterThan(7);
        // Every flow finishes but, perhaps, a WebSearch elephant (up to 30 MB) started late.
        assertThat(r.flows()).filteredOn(f -> f.bytes() < 1_000_000).allMatch(f -> f.fctNs() > 0);
        assertThat(c.flowsFinished()).isGreaterThanOrEqualTo(c.flowsStarted() - 2);
        // The 7:1 incast congests h0's port: ECN marks, CNPs back to the senders.
        assertThat(c.ecnMarks()).isPositive();
        assertThat(c.cnpsSent()).isPositive();
        assertThat(c.cnpsReceived()).isPositive();
        assertThat(c.linkTransmissions()).isGreaterThan(c.txPackets());
        assertThat(r.fctBuckets()).isNotEmpty();
        for (LabResults.FlowResult f : r.flows()) {
            if (f.fctNs() < 0) {
                continue;
            }
            assertThat(f.fctNs()).isGreaterThanOrEqualTo(f.idealFctNs() - 10);
            assertThat(f.slowdown()).isGreaterThan(0.99);
        }
        // Another seed: other arrivals, other results.
        assertThat(run(lab.withSeed(12))).isNotEqualTo(first);
    }

    @Test
    void payloadLengthsOnlyGiveTheSameResultsAsBytes() throws Exception {
        Lab bytes = LabLoader.parse(STAR, false);
        Lab lengths = bytes.withTransport(bytes.transport().withPayload(TransportSpec.PAYLOAD_LENGTH));
        var withBytes = (com.fasterxml.jackson.databind.node.ObjectNode)
                LabLoader.json().readTree(run(bytes));
        var withLengths = (com.fasterxml.jackson.databind.node.ObjectNode)
                LabLoader.json().readTree(run(lengths));
        assertThat(withLengths.get("lab").get("transport").get("payload").asText())
                .isEqualTo("length");
        withBytes.remove("lab");
        withLengths.remove("lab");
        // Same flows, FCTs, counters (link transmissions, CNPs, marks) and time series.
        assertThat(withLengths).isEqualTo(withBytes);
        assertThat(withLengths.get("counters").get("flowsFinished").asLong()).isPositive();
    }

    @Test
    void payloadLengthsOnlyGiveTheSameResultsAsBytesUnderDuplicationAndReordering() throws Exception {
        // Faults copy frames (duplicates) and hold them back: with lengths only the frames overlap
        // in memory (compact), and no copy may reach another frame's headers.
        String json = """
                {"name": "dup", "seed": 5, "durationUs": 300, "drainUs": 20000,
                 "topology": {"type": "star", "hosts": 4, "hostLink": {"rateGbps": 100,
                   "faults": {"loss": 0.002, "duplicate": 0.02, "reorder": 0.01, "reorderDelayNs": 3000}}},
                 "workloads": [{"type": "flows", "flows": [
                   {"src": "h0", "dst": "h1", "bytes": 1000000},
                   {"src": "h2", "dst": "h1", "bytes": 600000, "startUs": 10},
                   {"src": "h3", "dst": "h0", "bytes": 800000, "startUs": 20}]}]}
                """;
        Lab bytes = LabLoader.parse(json, false);
        Lab lengths = bytes.withTransport(bytes.transport().withPayload(TransportSpec.PAYLOAD_LENGTH));
        var withBytes = (com.fasterxml.jackson.databind.node.ObjectNode)
                LabLoader.json().readTree(run(bytes));
        var withLengths = (com.fasterxml.jackson.databind.node.ObjectNode)
                LabLoader.json().readTree(run(lengths));
        withBytes.remove("lab");
        withLengths.remove("lab");
        assertThat(withLengths).isEqualTo(withBytes);
        assertThat(withLengths.get("counters").get("flowsFinished").asLong()).isEqualTo(3);
    }

    @Test
    void payloadLengthsOnlyCannotBeVerified() {
        String json = """
                {"name": "pair", "topology": {"type": "pair"}, "transport": {"payload": "length"},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                                "verify": true}]}
                """;
        assertThatThrownBy(() -> LabLoader.parse(json, false))
                .isInstanceOf(LabException.class)
                .hasMessageContaining("verify");
        assertThatThrownBy(() -> LabLoader.parse(json.replace("\"length\"", "\"none\""), false))
                .isInstanceOf(LabException.class)
                .hasMessageContaining("transport.payload");
    }

    @Test
    void lossBringsRetransmissionsAndEveryFlowStillFinishes() {
        String json = """
                {"name": "lossy", "seed": 3, "durationUs": 200, "drainUs": 20000,
                 "topology": {"type": "pair", "hostLink": {"rateGbps": 100, "faults": {"loss": 0.01}}},
                 "transport": {"recovery": "gbn"},
                 "workloads": [{"type": "flows", "flows": [
                   {"src": "h0", "dst": "h1", "bytes": 2000000},
                   {"src": "h1", "dst": "h0", "bytes": 1000000, "startUs": 20}]}]}
                """;
        LabResults r;
        try (LabRun run = LabBackends.get("virtual").start(LabLoader.parse(json, false))) {
            r = run.run(RunProgress.NONE);
        }
        assertThat(r.counters().flowsFinished()).isEqualTo(2);
        assertThat(r.counters().injectedLosses()).isPositive();
        assertThat(r.counters().retransmittedPackets())
                .isGreaterThanOrEqualTo(r.counters().injectedLosses() / 2);
    }

    @Test
    void runnerWritesResultsPlotsAndReportAndReplays(@TempDir Path dir) throws Exception {
        Lab lab = LabLoader.parse(STAR, false)
                .withDurationUs(150, 5000)
                .withSweep(new SweepSpec(List.of(CcSpec.of("dcqcn"), CcSpec.NONE), null, null, null));
        List<LabRunner.Outcome> outcomes =
                new LabRunner(LabBackends.get("virtual"), dir, System.out, true, true).run(lab);
        assertThat(outcomes).hasSize(2);
        Path first = dir.resolve("cc=dcqcn");
        for (String f : List.of("results.json", "lab.json", "flows.csv", "fct.csv", "throughput.csv", "queues.csv")) {
            assertThat(first.resolve(f)).isNotEmptyFile();
        }
        assertThat(Files.readAllLines(first.resolve("flows.csv")))
                .hasSize(outcomes.getFirst().results().flows().size() + 1);
        // Bucket columns say what they are: slowdown percentiles, then FCT mean and percentiles in us.
        List<String> fct = Files.readAllLines(first.resolve("fct.csv"));
        assertThat(fct.getFirst())
                .isEqualTo("min_bytes,max_bytes,flows,p50_slowdown,p95_slowdown,p99_slowdown,"
                        + "mean_fct_us,p50_fct_us,p95_fct_us,p99_fct_us");
        LabResults.SizeBucket smallest =
                outcomes.getFirst().results().fctBuckets().getFirst();
        double[] fctUs = outcomes.getFirst().results().flows().stream()
                .filter(f -> f.fctNs() >= 0 && f.bytes() > smallest.minBytes() && f.bytes() <= smallest.maxBytes())
                .mapToDouble(f -> f.fctNs() / 1000.0)
                .sorted()
                .toArray();
        assertThat(fctUs).hasSize(smallest.flows());
        // Nearest rank: the smallest FCT with at least 99% of the bucket's flows at or below it.
        double p99 = fctUs[(int) Math.ceil(0.99 * fctUs.length) - 1];
        assertThat(smallest.p99FctUs()).isCloseTo(p99, org.assertj.core.data.Offset.offset(0.0001));
        assertThat(smallest.p50FctUs()).isLessThanOrEqualTo(smallest.p95FctUs()).isLessThanOrEqualTo(p99);
        for (String png : List.of("fct-slowdown.png", "throughput.png", "queues.png")) {
            var image = ImageIO.read(first.resolve(png).toFile());
            assertThat(image.getWidth()).as(png).isEqualTo(900);
            assertThat(image.getHeight()).as(png).isEqualTo(480);
        }
        assertThat(ImageIO.read(dir.resolve("fct-p99-comparison.png").toFile())).isNotNull();
        String html = Files.readString(dir.resolve("report.html"));
        assertThat(html).contains("<table>", "cc=dcqcn", "cc=none", "data:image/png;base64,");
        assertThat(html).doesNotContain("src=\"http", "href=\"http");
        // The results file replays its variant exactly.
        Lab replay = LabLoader.load(first.resolve("results.json"));
        assertThat(replay.cc().algorithm()).isEqualTo("dcqcn");
        assertThat(run(replay)).isEqualTo(Files.readString(first.resolve("results.json")));
        assertThat(LabLoader.load(first.resolve("lab.json"))).isEqualTo(replay);
    }
}
