package org.vrdma.harness.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading labs from JSON and YAML, defaults, and errors that name the offending field. */
class LabLoaderTest {
    static final String MINIMAL = """
            {"name": "m", "topology": {"type": "star", "hosts": 4}}
            """;

    @Test
    void aMissingLabFileSaysSo(@TempDir Path dir) {
        assertThatThrownBy(() -> LabLoader.load(dir.resolve("none.json")))
                .isInstanceOf(LabException.class)
                .hasMessageEndingWith("none.json: no such file");
    }

    @Test
    void minimalLabGetsDefaults() {
        Lab lab = LabLoader.parse(MINIMAL, false);
        assertThat(lab.seed()).isEqualTo(Lab.DEFAULT_SEED);
        assertThat(lab.durationUs()).isEqualTo(Lab.DEFAULT_DURATION_US);
        assertThat(lab.vpcs()).containsExactly(VpcSpec.DEFAULT);
        assertThat(lab.transport().recovery()).isEqualTo("sr");
        assertThat(lab.cc().isNone()).isTrue();
        LabNetwork net = TopologyGenerator.resolve(lab);
        assertThat(net.hosts()).hasSize(4);
        assertThat(net.hosts().get(0).enis().getFirst().ipv4()).isEqualTo(Ipv4.parse("10.0.0.1"));
        assertThat(net.hosts().get(3).enis().getFirst().ipv4()).isEqualTo(Ipv4.parse("10.0.0.4"));
    }

    @Test
    void yamlAndJsonGiveTheSameLab(@TempDir Path dir) throws Exception {
        Path yaml = dir.resolve("lab.yaml");
        Files.writeString(yaml, """
                name: m
                topology:
                  type: star
                  hosts: 4
                """);
        assertThat(LabLoader.load(yaml)).isEqualTo(LabLoader.parse(MINIMAL, false));
    }

    @Test
    void everyReadyMadeLabIsValid() throws Exception {
        try (var files = Files.list(Path.of("labs"))) {
            var labs = files.toList();
            assertThat(labs).hasSizeGreaterThanOrEqualTo(6);
            for (Path f : labs) {
                Lab lab = LabLoader.load(f);
                assertThat(TopologyGenerator.resolve(lab).hosts())
                        .as(f.toString())
                        .isNotEmpty();
            }
        }
    }

    @Test
    void theReadmeLabSampleIsAValidLab() throws Exception {
        // Users copy it: every field and algorithm setting in it must load as shown.
        String readme = Files.readString(Path.of("README.md"));
        int section = readme.indexOf("### Lab files (JSON or YAML)");
        int open = readme.indexOf("```json\n", section);
        int close = readme.indexOf("\n```", open);
        assertThat(section).isNotNegative();
        String sample = readme.substring(open + "```json\n".length(), close).replaceAll("//[^\n]*", "");
        Lab lab = LabLoader.parse(sample, false);
        assertThat(lab.name()).isEqualTo("cc-comparison-star16");
        assertThat(lab.cc().config().fieldNames()).toIterable().isNotEmpty();
        assertThat(SweepSpec.expand(lab)).hasSize(4);
    }

    @Test
    void unknownFieldIsNamedWithItsPath() {
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4,\"hostLink\":{\"rateGbs\":100}}}",
                "topology.hostLink.rateGbs",
                "unknown field rateGbs");
    }

    @Test
    void badValuesAreNamedWithTheirPath() {
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4,\"hostLink\":{\"rateGbps\":-1}}}",
                "topology.hostLink.rateGbps",
                "must be in (0, 10000]");
        assertError("{\"name\":\"m\",\"topology\":{\"type\":\"ring\"}}", "topology.type", "must be one of");
        assertError("{\"name\":\"m\",\"topology\":{\"type\":\"fatTree\",\"k\":5}}", "topology.k", "must be even");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"workloads\":[{\"type\":\"incast\",\"receiver\":\"h9\",\"senderCount\":2,\"flowBytes\":1}]}",
                "workloads[0].receiver",
                "no host h9");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"workloads\":[{\"type\":\"poisson\",\"cdf\":\"websearch\",\"load\":1.5}]}",
                "workloads[0].load",
                "must be in (0, 1]");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},\"cc\":{\"algorithm\":\"cubic\"}}",
                "cc.algorithm",
                "unknown algorithm cubic");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"cc\":{\"algorithm\":\"dcqcn\",\"config\":{\"noSuchKnob\":1}}}",
                "cc.config",
                "");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"workloads\":[{\"type\":\"bogus\"}]}",
                "workloads[0]",
                "unknown type");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"vpcs\":[{\"name\":\"a\",\"vni\":5,\"cidr\":\"10.0.0.0/16\"},{\"name\":\"b\",\"vni\":5,\"cidr\":\"10.1.0.0/16\"}]}",
                "vpcs[1].vni",
                "used by two VPCs");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},"
                        + "\"hosts\":[{\"name\":\"h1\",\"enis\":[{\"vpc\":\"nope\"}]}]}",
                "hosts[0].enis[0].vpc",
                "no VPC named nope");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"star\",\"hosts\":4},\"sweep\":{\"recovery\":[\"fast\"]}}",
                "sweep.recovery[0]",
                "must be sr or gbn");
        assertError("{\"name\":\"m\"}", "topology", "is required");
        assertError("{\"name\":\"m\",", "", "not valid JSON");
        assertError(
                "{\"name\":\"m\",\n \"topology\": {\"type\":\"star\"},, }", "", "not valid JSON at line 2, column 30");
    }

    @Test
    void valuesOfTheWrongKindSayWhatTheFieldTakes() {
        assertError(
                "{\"name\":\"m\",\"seed\":\"abc\",\"topology\":{\"type\":\"pair\"}}",
                "seed",
                "expected a whole number, not \"abc\"");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"pair\",\"hostLink\":{\"rateGbps\":\"fast\"}}}",
                "topology.hostLink.rateGbps",
                "expected a number, not \"fast\"");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"pair\",\"hostLink\":{\"delayNs\":1.5}}}",
                "topology.hostLink.delayNs",
                "expected a whole number");
        assertError("{\"name\":\"m\",\"topology\":\"star\"}", "topology", "expected an object");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"pair\"},\"workloads\":{\"type\":\"poisson\"}}",
                "workloads",
                "expected a list");
        assertError("[]", "", "expected a JSON object (the lab)");
        assertError(
                "{\"name\":\"m\",\"topology\":{\"type\":\"pair\"},\"workloads\":[{\"type\":\"cdf\"}]}",
                "workloads[0]",
                "unknown type cdf (workloads: perftest, incast, allToAll, poisson, flows)");
    }

    @Test
    void addressesOutsideTheVpcAreRejected() {
        String json = "{\"name\":\"m\",\"topology\":{\"type\":\"pair\"},"
                + "\"hosts\":[{\"name\":\"h0\",\"enis\":[{\"ipv4\":\"192.168.1.1\"}]}]}";
        Lab lab = LabLoader.parse(json, false);
        assertThatThrownBy(() -> TopologyGenerator.resolve(lab))
                .isInstanceOf(LabException.class)
                .hasMessageContaining("outside 10.0.0.0/16");
    }

    @Test
    void resultsFileReplaysItsLab() {
        Lab lab = LabLoader.parse(MINIMAL, false).withSeed(42);
        LabResults r = new LabResults(
                LabResults.FORMAT,
                "virtual",
                42,
                lab,
                0,
                java.util.List.of(),
                java.util.List.of(),
                java.util.List.of(),
                null,
                null,
                null);
        String json = org.vrdma.harness.lab.report.ResultsWriter.json(r);
        assertThat(LabLoader.parse(json, false)).isEqualTo(lab);
    }

    private static void assertError(String json, String path, String message) {
        assertThatThrownBy(() -> LabLoader.parse(json, false))
                .isInstanceOfSatisfying(
                        LabException.class, e -> assertThat(e.path()).isEqualTo(path))
                .hasMessageContaining(message);
    }
}
