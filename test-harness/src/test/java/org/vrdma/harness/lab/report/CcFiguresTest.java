package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.ccsim.CcComparison;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.SampledLeakDetection;

/** {@code ./vrdma lab figures}: tables and plots from real (small) lab runs, README sections rewritten. */
@ExtendWith(SampledLeakDetection.class)
class CcFiguresTest {
    @Test
    void replacesOnlyTheMarkedSections() {
        String text = "intro\n<!-- BEGIN generated a-table (./vrdma lab figures) -->\nold a\n"
                + "<!-- END generated a-table -->\nmiddle\n<!-- BEGIN generated b -->\n<!-- END generated b -->\nend\n";
        String out = CcFigures.replaceSections(text, Map.of("a-table", "new a", "b", "| b |\n"), "X.md");
        assertThat(out)
                .isEqualTo("intro\n<!-- BEGIN generated a-table (./vrdma lab figures) -->\nnew a\n"
                        + "<!-- END generated a-table -->\nmiddle\n<!-- BEGIN generated b -->\n| b |\n"
                        + "<!-- END generated b -->\nend\n");
        assertThat(CcFigures.replaceSections(out, Map.of("a-table", "new a", "b", "| b |\n"), "X.md"))
                .isEqualTo(out);
        assertThatThrownBy(() -> CcFigures.replaceSections(text, Map.of("a-table", "x"), "X.md"))
                .isInstanceOf(LabException.class)
                .hasMessageContaining("X.md")
                .hasMessageContaining("'b'");
    }

    @Test
    void leavesAnOptionalSectionAloneWhenNotGenerated() {
        String text = "<!-- BEGIN generated cc-fat-tree-table -->\nkept\n<!-- END generated cc-fat-tree-table -->\n"
                + "<!-- BEGIN generated a -->\nold\n<!-- END generated a -->\n";
        assertThat(CcFigures.replaceSections(text, Map.of("a", "new"), "X.md"))
                .isEqualTo(
                        "<!-- BEGIN generated cc-fat-tree-table -->\nkept\n<!-- END generated cc-fat-tree-table -->\n"
                                + "<!-- BEGIN generated a -->\nnew\n<!-- END generated a -->\n");
        assertThat(CcFigures.replaceSections(text, Map.of("a", "new", "cc-fat-tree-table", "fresh"), "X.md"))
                .contains("fresh")
                .doesNotContain("kept");
    }

    @Test
    void fairShareIsProcessorSharing() {
        // 2000 B from 0 and 1000 B from 1000 ns on a 1 B/ns port: alone until 1000 ns, then half each.
        List<LabResults.FlowResult> flows = List.of(
                new LabResults.FlowResult(0, "w", "h1", "h0", 2000, 0, 0, 0, 2000, 1, "x"),
                new LabResults.FlowResult(1, "w", "h2", "h0", 1000, 1000, 0, 0, 1000, 1, "x"));
        assertThat(CcFigures.fairShareFctNs(flows)).containsExactly(3000.0, 2000.0);
    }

    @Test
    void labelsReadAsInTheReadmes() {
        assertThat(CcFigures.display("cc=dcqcn load=0.3")).isEqualTo("DCQCN 30%");
        assertThat(CcFigures.display("cc=none")).isEqualTo("none");
        assertThat(CcFigures.display("recovery=gbn loss=1.0E-4")).isEqualTo("go-back-N loss 0.01%");
    }

    @Test
    void aSingleSizeBucketPlots() {
        byte[] png = Plots.fctSlowdown(
                "one size", List.of(new LabResults.SizeBucket(10_000_000, Long.MAX_VALUE, 4, 1.2, 1.5, 1.5, 9000)));
        assertThat(png).startsWith(0x89, 'P', 'N', 'G');
    }

    @Test
    void regeneratesTablesPlotsAndReadmesFromRuns(@TempDir Path root) throws Exception {
        writeSmallLabs(root);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        CcFigures figures = new CcFigures(
                root,
                root.resolve("out"),
                LabBackends.get("virtual"),
                new PrintStream(console, true, StandardCharsets.UTF_8),
                false,
                new CcComparison.Setup(500_000, 100_000, 200_000, 4, 100_000, 5_000_000));
        Map<String, String> sections = figures.run();

        assertThat(sections)
                .containsOnlyKeys(
                        "cc-star16-table",
                        "cc-incast-table",
                        "cc-fairness-table",
                        "loss-sweep-table",
                        "cc-compare-table");
        assertThat(sections.get("cc-star16-table")).contains("| HPCC 30% |", "| none 30% |", "seed 3", "p99 ≤ 100 kB");
        assertThat(sections.get("cc-incast-table"))
                .contains("| DCQCN | 4/4 |", "| none | 4/4 |", "| retransmitted | timeouts | spurious | CNPs |");
        assertThat(sections.get("cc-star16-table")).contains("| timeouts | spurious |");
        assertThat(sections.get("cc-fairness-table"))
                .contains("| Swift | 2/2 |", "| TIMELY | 2/2 |", "h1 1 MB from 0 ms");
        assertThat(sections.get("loss-sweep-table"))
                .contains(
                        "| 0% |",
                        "| 1% |",
                        "go-back-N Gbit/s",
                        "selective repeat Gbit/s",
                        "| retransmitted | timeouts | spurious |")
                .doesNotContain("B wrong");
        assertThat(sections.get("cc-compare-table")).contains("| dcqcn |", "| hpcc |", "| static |");
        for (String png : List.of(
                "lab-cc-comparison-star16-p99.png",
                "lab-cc-comparison-star16-p50.png",
                "lab-cc-incast-queue.png",
                "lab-cc-fairness-throughput.png",
                "lab-loss-sweep.png")) {
            assertThat(Files.readAllBytes(root.resolve("docs/img").resolve(png)))
                    .as(png)
                    .startsWith(0x89, 'P', 'N', 'G');
        }
        assertThat(root.resolve("out/cc-star16-table.md")).hasContent(sections.get("cc-star16-table"));
        assertThat(root.resolve("out/incast-32to1/cc=dcqcn/results.json")).isNotEmptyFile();

        assertThat(figures.updateReadmes(sections))
                .containsExactly(root.resolve("README.md"), root.resolve("congestion-control/README.md"));
        String updated = Files.readString(root.resolve("README.md"));
        assertThat(updated)
                .doesNotContain("stale")
                .contains(sections.get("loss-sweep-table"))
                .contains("from an earlier --fat-tree run");
        assertThat(root.resolve("docs/img/lab-cc-fat-tree-p99.png")).doesNotExist();
        assertThat(figures.updateReadmes(sections)).isEmpty();
    }

    @Test
    void fatTreeOptionAddsItsTableAndPlots(@TempDir Path root) throws Exception {
        writeSmallLabs(root);
        Files.writeString(
                root.resolve("test-harness/labs/hpcc-fat-tree.json"),
                "{\"name\": \"hpcc-fat-tree\", \"seed\": 2, \"durationUs\": 100, \"drainUs\": 3000,"
                        + " \"topology\": {\"type\": \"fatTree\", \"k\": 4, \"pods\": 2, \"hostsPerTor\": 2,"
                        + " \"hostLink\": {\"rateGbps\": 100, \"delayNs\": 1000},"
                        + " \"fabricLink\": {\"rateGbps\": 400, \"delayNs\": 1000}},"
                        + " \"transport\": {\"payload\": \"length\"},"
                        + " \"workloads\": [{\"type\": \"poisson\", \"cdf\": \"websearch\", \"load\": 0.3}],"
                        + " \"sweep\": {\"cc\": [{\"algorithm\": \"dcqcn\"}, {\"algorithm\": \"hpcc\"}]}}");
        Files.writeString(
                root.resolve("test-harness/labs/hpcc-fat-tree-pfc.json"),
                Files.readString(root.resolve("test-harness/labs/hpcc-fat-tree.json"))
                        .replace("\"hpcc-fat-tree\"", "\"hpcc-fat-tree-pfc\"")
                        .replace(
                                "\"workloads\"",
                                "\"pfc\": {\"enabled\": true, \"xoffBytes\": 20000, \"xonBytes\": 10000}, \"workloads\""));
        CcFigures figures = new CcFigures(
                        root,
                        root.resolve("out"),
                        LabBackends.get("virtual"),
                        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                        false,
                        new CcComparison.Setup(500_000, 100_000, 200_000, 4, 100_000, 5_000_000))
                .withFatTree(true);
        Map<String, String> sections = figures.run();

        assertThat(sections).containsKey("cc-fat-tree-table");
        String table = sections.get("cc-fat-tree-table");
        assertThat(table)
                .contains("`./vrdma lab figures --fat-tree`", "seed 2", "| all |", "DCQCN p95", "HPCC p99")
                .contains("| DCQCN |", "| HPCC |", "ECN marks", "link transmissions")
                .contains("| DCQCN+PFC |", "| HPCC+PFC |", "DCQCN+PFC p99", "PAUSE frames", "| – |");
        for (String png : List.of("lab-cc-fat-tree-p99.png", "lab-cc-fat-tree-p95.png")) {
            assertThat(Files.readAllBytes(root.resolve("docs/img").resolve(png)))
                    .as(png)
                    .startsWith(0x89, 'P', 'N', 'G');
        }
        assertThat(root.resolve("out/hpcc-fat-tree/cc=hpcc/results.json")).isNotEmptyFile();
        assertThat(root.resolve("out/hpcc-fat-tree-pfc/cc=hpcc/pfc.csv")).isNotEmptyFile();
        figures.updateReadmes(sections);
        assertThat(Files.readString(root.resolve("README.md")))
                .contains(table)
                .doesNotContain("from an earlier --fat-tree run");
    }

    private static void writeSmallLabs(Path root) throws Exception {
        Path labs = Files.createDirectories(root.resolve("test-harness/labs"));
        String link = "\"hostLink\": {\"rateGbps\": 100, \"delayNs\": 1000, \"bufferBytes\": 1048576,"
                + " \"ecn\": {\"kMinBytes\": 100000, \"kMaxBytes\": 400000, \"pMax\": 0.2}}";
        Files.writeString(
                labs.resolve("cc-comparison-star16.json"),
                "{\"name\": \"cc-comparison-star16\", \"seed\": 3, \"durationUs\": 100, \"drainUs\": 300,"
                        + " \"topology\": {\"type\": \"star\", \"hosts\": 4, " + link + "},"
                        + " \"workloads\": [{\"type\": \"poisson\", \"cdf\": \"websearch\", \"load\": 0.3}],"
                        + " \"sweep\": {\"cc\": [{\"algorithm\": \"hpcc\"}, {\"algorithm\": \"none\"}], \"load\": [0.3]}}");
        Files.writeString(
                labs.resolve("incast-32to1.yaml"),
                "name: incast-32to1\nseed: 1\ndurationUs: 50\ndrainUs: 2000\nsampleIntervalUs: 5\n"
                        + "topology: {type: star, hosts: 5, " + link.replace("\"", "") + "}\n"
                        + "workloads: [{type: incast, receiver: h0, senderCount: 4, flowBytes: 65536, rounds: 1}]\n"
                        + "sweep: {cc: [{algorithm: dcqcn}, {algorithm: none}]}\n");
        Files.writeString(
                labs.resolve("fairness-convergence.json"),
                "{\"name\": \"fairness-convergence\", \"seed\": 1, \"durationUs\": 100, \"drainUs\": 2000,"
                        + " \"topology\": {\"type\": \"star\", \"hosts\": 3, " + link + "},"
                        + " \"workloads\": [{\"type\": \"flows\", \"flows\": ["
                        + "{\"src\": \"h1\", \"dst\": \"h0\", \"bytes\": 1000000, \"startUs\": 0},"
                        + "{\"src\": \"h2\", \"dst\": \"h0\", \"bytes\": 500000, \"startUs\": 50}]}],"
                        + " \"sweep\": {\"cc\": [{\"algorithm\": \"swift\"}, {\"algorithm\": \"timely\"}]}}");
        Files.writeString(
                labs.resolve("loss-sweep.json"),
                "{\"name\": \"loss-sweep\", \"seed\": 1, \"durationUs\": 50, \"drainUs\": 20000,"
                        + " \"topology\": {\"type\": \"pair\", \"hostLink\": {\"rateGbps\": 100, \"delayNs\": 1000}},"
                        + " \"workloads\": [{\"type\": \"perftest\", \"test\": \"writeBw\", \"client\": \"h0\","
                        + " \"server\": \"h1\", \"sizeBytes\": 65536, \"iterations\": 20, \"verify\": true}],"
                        + " \"sweep\": {\"recovery\": [\"gbn\", \"sr\"], \"loss\": [0.0, 0.01]}}");
        String readme = "# x\n<!-- BEGIN generated cc-star16-table -->\nstale\n<!-- END generated cc-star16-table -->\n"
                + "<!-- BEGIN generated cc-incast-table -->\n<!-- END generated cc-incast-table -->\n"
                + "<!-- BEGIN generated cc-fairness-table -->\n<!-- END generated cc-fairness-table -->\n"
                + "<!-- BEGIN generated loss-sweep-table -->\n<!-- END generated loss-sweep-table -->\n"
                + "<!-- BEGIN generated cc-fat-tree-table -->\nfrom an earlier --fat-tree run\n"
                + "<!-- END generated cc-fat-tree-table -->\n";
        Files.writeString(root.resolve("README.md"), readme);
        Files.createDirectories(root.resolve("congestion-control"));
        Files.writeString(
                root.resolve("congestion-control/README.md"),
                "<!-- BEGIN generated cc-compare-table -->\n<!-- END generated cc-compare-table -->\n");
        Files.writeString(root.resolve("test-harness/README.md"), "no generated sections\n");
    }
}
