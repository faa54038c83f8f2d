package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.SampledLeakDetection;

/** {@code ./vrdma lab}: validate, run the two-host lab, replay its results. */
@ExtendWith(SampledLeakDetection.class)
class LabCommandTest {
    @Test
    void validateNamesTheBadField(@TempDir Path dir) throws Exception {
        assertThat(VrdmaCli.run("lab", "validate", "labs/hpcc-fat-tree.json")).isZero();
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"name\":\"b\",\"topology\":{\"type\":\"star\",\"hosts\":1}}");
        assertThat(VrdmaCli.run("lab", "validate", bad.toString())).isEqualTo(2);
        assertThat(VrdmaCli.run(
                        "lab", "run", bad.toString(), "--out", dir.resolve("o").toString()))
                .isEqualTo(2);
        assertThat(VrdmaCli.run("lab", "run", "labs/two-hosts.json", "--backend", "nosuch"))
                .isEqualTo(2);
    }

    @Test
    void runsTheTwoHostLabAndReplaysIt(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("two");
        assertThat(VrdmaCli.run("lab", "run", "labs/two-hosts.json", "--out", out.toString(), "--no-progress"))
                .isZero();
        String json = Files.readString(out.resolve("results.json"));
        LabResults r = LabLoader.json().readValue(json, LabResults.class);
        assertThat(r.perftests()).hasSize(3);
        for (LabResults.PerftestResult p : r.perftests()) {
            assertThat(p.mismatchedBytes()).as(p.test()).isZero();
            assertThat(p.verifiedBytes()).as(p.test()).isPositive();
        }
        assertThat(r.perftests().get(0).gbps()).isGreaterThan(80);
        assertThat(out.resolve("report.html")).isNotEmptyFile();
        Path again = dir.resolve("again");
        assertThat(VrdmaCli.run(
                        "lab",
                        "run",
                        out.resolve("results.json").toString(),
                        "--out",
                        again.toString(),
                        "--no-progress",
                        "--no-plots"))
                .isZero();
        assertThat(Files.readString(again.resolve("results.json"))).isEqualTo(json);
    }
}
