package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.SampledLeakDetection;
import picocli.CommandLine;

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
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRealTimeBackendRefusesPfcBeforeAnyHostStarts(@TempDir Path dir) throws Exception {
        Path lab = dir.resolve("pfc.json");
        Files.writeString(lab, """
                {"name": "pfc", "pfc": {"enabled": true, "xoffBytes": 262144, "xonBytes": 243712},
                 "topology": {"type": "pair", "hostLink": {"rateGbps": 10}},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                                "sizeBytes": 65536, "iterations": 10}]}
                """);
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            exit = VrdmaCli.run(
                    "lab",
                    "run",
                    lab.toString(),
                    "--backend",
                    "embedded",
                    "--out",
                    dir.resolve("o").toString(),
                    "--no-progress",
                    "--no-plots");
        } finally {
            System.setErr(saved);
        }
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("pfc", "modelled by the virtual backend only");
        assertThat(dir.resolve("o").resolve("results.json")).doesNotExist();
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aRealTimeRunAppliesThePairsHostLinkFaults(@TempDir Path dir) throws Exception {
        Path lab = dir.resolve("lossy.json");
        Files.writeString(lab, """
                {"name": "lossy", "topology": {"type": "pair", "hostLink": {"rateGbps": 10,
                   "faults": {"loss": 0.01, "duplicate": 0.01}, "controlFaults": {"loss": 0.01}}},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                                "sizeBytes": 4096, "iterations": 20, "verify": true}]}
                """);
        Path out = dir.resolve("o");
        assertThat(VrdmaCli.run(
                        "lab",
                        "run",
                        lab.toString(),
                        "--backend",
                        "embedded",
                        "--out",
                        out.toString(),
                        "--no-progress",
                        "--no-plots"))
                .isZero();
        LabResults r = LabLoader.json().readValue(Files.readString(out.resolve("results.json")), LabResults.class);
        // The pair's link is each host's uplink there: its faults apply; only its 1 us delay (the
        // default), below what a real-time timer honours, is named as not applied.
        assertThat(r.notes())
                .filteredOn(n -> n.contains("not applied"))
                .singleElement()
                .satisfies(n -> assertThat(n)
                        .startsWith("host link delays under 50 us (1000 ns here) were not applied")
                        .doesNotContain("faults"));
        assertThat(r.perftests().getFirst().verifiedBytes()).isEqualTo(20L * 4096);
    }

    /** Runs {@code args} and returns what the command printed, its exit code asserted zero. */
    private static String output(String... args) {
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(cli.execute(args)).as(out.toString()).isZero();
        return out.toString();
    }

    @Test
    void validatePrintsWhatTheLabResolvesTo() {
        String incast = output("lab", "validate", "labs/incast-32to1.yaml");
        assertThat(incast)
                .contains(
                        "labs/incast-32to1.yaml: valid;",
                        "\nseed 1; workloads start traffic for 2500 us, then up to 20000 us to drain; samples every 5 us\n",
                        "\ntopology: star, 33 hosts, 1 switch, 33 links\n",
                        "\n  33 host links: 100 Gbit/s, 1000 ns, buffer 4194304 B,"
                                + " ECN kMinBytes=100000 kMaxBytes=400000 pMax=0.2\n",
                        "\ncongestion control per ENI (each sweep run replaces the lab-wide one):\n"
                                + "  none: 33 ENIs h0/eni0, h1/eni0, h2/eni0, h3/eni0, h4/eni0, h5/eni0, ... h32/eni0\n",
                        "\nworkloads: 1\n  [0] incast: receiver=h0 senderCount=32 flowBytes=262144 rounds=5 intervalUs=500\n",
                        "\nruns: 5 (cc=dcqcn, cc=timely, cc=swift, cc=hpcc, cc=none)\n",
                        "\nbackend: virtual (discrete-event virtual time");
    }

    @Test
    void validateShowsPerEniCcFabricLinksAndTheChosenBackend(@TempDir Path dir) throws Exception {
        Path lab = dir.resolve("two-vpcs.json");
        Files.writeString(lab, """
                {"name": "two-vpcs", "seed": 42, "durationUs": 300,
                 "vpcs": [{"name": "a", "vni": 10, "cidr": "10.1.0.0/16"}, {"name": "b", "vni": 20, "cidr": "10.2.0.0/16"}],
                 "topology": {"type": "dumbbell", "leftHosts": 2, "rightHosts": 2,
                   "hostLink": {"rateGbps": 25, "delayNs": 500, "faults": {"loss": 0.001}},
                   "bottleneckLink": {"rateGbps": 40}},
                 "hosts": [{"name": "h3", "enis": [{"name": "eni0", "vpc": "b", "cc": {"algorithm": "hpcc"}}]}],
                 "cc": {"algorithm": "dcqcn", "config": {"raiBps": 40000000}},
                 "transport": {"payload": "length", "recovery": "gbn"},
                 "workloads": [{"type": "poisson", "cdf": "websearch", "load": 0.4, "hosts": ["h0", "h1", "h2"],
                                "cc": {"algorithm": "timely"}}]}
                """);
        String out = output("lab", "validate", lab.toString(), "--backend", "embedded");
        assertThat(out)
                .contains(
                        "\nseed 42; workloads start traffic for 300 us, then up to 3000 us to drain",
                        "\ntopology: dumbbell, 4 hosts, 2 switches, 5 links\n",
                        "\n  4 host links: 25 Gbit/s, 500 ns, buffer 1048576 B, faults loss=0.001\n",
                        // The bottleneck takes what it leaves out from the host links.
                        "\n  1 fabric link: 40 Gbit/s, 500 ns, buffer 1048576 B, faults loss=0.001\n",
                        "\nvpc a: VNI 10, 10.1.0.0/16\nvpc b: VNI 20, 10.2.0.0/16\n",
                        "transport: recovery gbn,",
                        "payload length (bytes neither written nor checked)",
                        "\ncongestion control per ENI:\n"
                                + "  dcqcn {\"raiBps\":40000000}: 3 ENIs h0/eni0 (a), h1/eni0 (a), h2/eni0 (a)\n"
                                + "  hpcc: 1 ENI h3/eni0 (b)\n",
                        "\n  [0] poisson: cdf=websearch load=0.4 hosts=[h0, h1, h2] cc=timely"
                                + " (flow sizes websearch: mean 1711250 B, median 73077 B, p99 23333333 B)\n",
                        "\nruns: 1\n",
                        "\nbackend: embedded (");
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
