package org.vrdma.control.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.api.Controller;
import org.vrdma.control.service.Json;
import picocli.CommandLine;

/** The CLI against a real controller: output formats, readable errors and exit codes. */
class ControlCliTest {
    @TempDir
    static Path dir;

    static Controller controller;
    private StringWriter out;
    private StringWriter err;

    @BeforeAll
    static void start() throws Exception {
        controller = Controller.start(dir.resolve("data"), "127.0.0.1", 0);
    }

    @AfterAll
    static void stop() {
        if (controller != null) {
            controller.close();
        }
    }

    @BeforeEach
    void buffers() {
        out = new StringWriter();
        err = new StringWriter();
    }

    private int run(String... args) {
        CommandLine cli = new CommandLine(new ControlCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 4];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--endpoint";
        all[args.length + 1] = controller.endpoint();
        all[args.length + 2] = "--token-file";
        all[args.length + 3] = controller.tokenFile().toString();
        return cli.execute(all);
    }

    private JsonNode json(String... args) throws Exception {
        out.getBuffer().setLength(0);
        assertThat(run(args)).as(err.toString()).isZero();
        return Json.MAPPER.readTree(out.toString());
    }

    @Test
    void createsAVpcWithTwoVrdmaEnisAndListsThemAsJsonAndTable() throws Exception {
        String vpc = json("vpc", "create", "--cidr", "10.7.0.0/16", "--name", "cli", "-o", "json")
                .path("id")
                .asText();
        String subnet = json("subnet", "create", "--vpc", vpc, "--cidr", "10.7.1.0/24", "-o", "json")
                .path("id")
                .asText();
        String qos = json("qos", "create", "--bandwidth-mbps", "10000", "--rdma-share", "60", "-o", "json")
                .path("id")
                .asText();
        String sg = json("sg", "create", "--vpc", vpc, "-o", "json").path("id").asText();
        JsonNode withRule = json("sg", "rule-add", sg, "--protocol", "rdma", "--cidr", "10.7.0.0/16", "-o", "json");
        assertThat(withRule.path("rules")).hasSize(1);
        for (int i = 0; i < 2; i++) {
            JsonNode eni = json(
                    "eni",
                    "create",
                    "--subnet",
                    subnet,
                    "--vrdma",
                    "--qos",
                    qos,
                    "--sg",
                    sg,
                    "--ip",
                    "10.7.1." + (10 + i),
                    "-o",
                    "json");
            assertThat(eni.path("vrdma").asBoolean()).isTrue();
        }
        JsonNode list = json("eni", "list", "--subnet", subnet, "-o", "json");
        assertThat(list.path("items").findValuesAsText("ip")).containsExactlyInAnyOrder("10.7.1.10", "10.7.1.11");

        out.getBuffer().setLength(0);
        assertThat(run("eni", "list", "--subnet", subnet)).isZero();
        String[] lines = out.toString().strip().split("\n");
        assertThat(lines).hasSize(3);
        assertThat(lines[0]).startsWith("ID").contains("IP", "MAC", "VRDMA");
        assertThat(lines[1]).contains("10.7.1.1", "true", qos, sg);

        out.getBuffer().setLength(0);
        assertThat(run("qos", "update", qos, "--bandwidth-mbps", "5000")).isZero();
        assertThat(out.toString()).contains("5000");
    }

    @Test
    void apiErrorsExitOneWithTheServersMessage() throws Exception {
        String vpc = json("vpc", "create", "--cidr", "10.8.0.0/16", "-o", "json")
                .path("id")
                .asText();
        json("subnet", "create", "--vpc", vpc, "--cidr", "10.8.0.0/24", "-o", "json");
        assertThat(run("subnet", "create", "--vpc", vpc, "--cidr", "10.8.0.128/25"))
                .isEqualTo(1);
        assertThat(err.toString()).contains("error: cidr_overlap (cidr):").contains("overlaps subnet");

        err.getBuffer().setLength(0);
        assertThat(run("vpc", "delete", vpc)).isEqualTo(1);
        assertThat(err.toString()).contains("has_dependents").contains("delete them first");

        err.getBuffer().setLength(0);
        assertThat(run("vpc", "get", "vpc-nothing")).isEqualTo(1);
        assertThat(err.toString()).contains("not_found");
    }

    @Test
    void usageErrorsExitTwo() {
        assertThat(run("vpc", "create")).isEqualTo(2);
        assertThat(err.toString()).contains("--cidr");
        assertThat(run("eni", "frobnicate")).isEqualTo(2);
        assertThat(run("vpc", "list", "-o", "yaml")).isEqualTo(2);
    }

    @Test
    void aWrongTokenIsReportedReadably() {
        CommandLine cli = new CommandLine(new ControlCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute("vpc", "list", "--endpoint", controller.endpoint(), "--token", "nope");
        assertThat(code).isEqualTo(1);
        assertThat(err.toString()).contains("unauthenticated (Authorization)");
    }

    @Test
    void anUnreachableControllerIsReportedReadably() {
        CommandLine cli = new CommandLine(new ControlCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute("vpc", "list", "--endpoint", "http://127.0.0.1:1", "--token", "x");
        assertThat(code).isEqualTo(1);
        assertThat(err.toString()).startsWith("error:");
    }

    @Test
    void upStartsAControllerWithRealVSwitchesProgrammedByTheirAgents() throws Exception {
        Path data = dir.resolve("up");
        for (int run = 0; run < 2; run++) {
            // The second run on the same data directory reuses the VPC, hosts and ENIs; the hosts'
            // ephemeral underlay ports change and their records follow.
            out.getBuffer().setLength(0);
            CommandLine cli = new CommandLine(new ControlCli());
            cli.setOut(new PrintWriter(out, true));
            cli.setErr(new PrintWriter(err, true));
            assertThat(cli.execute(
                            "up", "--hosts", "2", "--data-dir", data.toString(), "--port", "0", "--run-seconds", "1"))
                    .as(err.toString())
                    .isZero();
            String text = out.toString();
            assertThat(text)
                    .contains("controller listening on http://127.0.0.1:")
                    .contains("token file: " + data.resolve("api-token"))
                    .containsPattern(
                            "host host-[0-9a-f]+ \\(agent started\\) underlay 127\\.0\\.0\\.1:[1-9][0-9]* with vRDMA ENI eni-")
                    .containsPattern(
                            "host host-[0-9a-f]+ programmed on vSwitch 127\\.0\\.0\\.1:[1-9][0-9]*: 1 ENI\\(s\\), 1 route\\(s\\)")
                    .contains("data plane: vSwitches over UDP");
            assertThat(text.split("programmed on vSwitch", -1)).hasSize(3);
        }
    }

    @Test
    void upKeepsAnInMemoryDataPlaneOnRequest() throws Exception {
        CommandLine cli = new CommandLine(new ControlCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute(
                        "up",
                        "--hosts",
                        "3",
                        "--data-dir",
                        dir.resolve("mem").toString(),
                        "--port",
                        "0",
                        "--data-plane",
                        "memory",
                        "--run-seconds",
                        "0"))
                .as(err.toString())
                .isZero();
        assertThat(out.toString())
                .containsPattern("host host-[0-9a-f]+ programmed: 1 ENI\\(s\\), 2 route\\(s\\)")
                .contains("data plane: in memory");
    }
}
