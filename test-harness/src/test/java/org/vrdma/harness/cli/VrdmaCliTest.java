package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class VrdmaCliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void theCommandLineQuietsTheDockerProbeButAGivenLevelWins() {
        String probe = "org.slf4j.simpleLogger.log.org.testcontainers.dockerclient";
        String tc = "org.slf4j.simpleLogger.log.org.testcontainers";
        String reaper = "org.slf4j.simpleLogger.log.org.testcontainers.utility.ResourceReaper";
        String dockerJava = "org.slf4j.simpleLogger.log.com.github.dockerjava";
        String containers = "org.slf4j.simpleLogger.log.tc";
        java.util.List<String> keys = java.util.List.of(probe, tc, reaper, dockerJava, containers);
        java.util.Map<String, String> before = new java.util.HashMap<>();
        keys.forEach(k -> before.put(k, System.getProperty(k)));
        try {
            keys.forEach(System::clearProperty);
            System.setProperty(tc, "debug");
            VrdmaCli.quietLibraryLogs();
            assertThat(System.getProperty(probe)).isEqualTo("off");
            assertThat(System.getProperty(tc)).isEqualTo("debug");
            assertThat(System.getProperty(reaper)).isEqualTo("error");
            assertThat(System.getProperty(dockerJava)).isEqualTo("warn");
            // A lab's container starts ("Creating container for image ...") are not console news.
            assertThat(System.getProperty(containers)).isEqualTo("warn");
        } finally {
            // Tests keep the libraries' full logs.
            before.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    @Test
    void helpListsTheCommands() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString())
                .contains("demo", "link", "help", "up", "controller", "vpc", "subnet", "host", "eni", "sg", "qos");
    }

    @Test
    void everyCommandTakesHelp() {
        for (String command : new String[] {"demo", "bench", "link", "lab", "cc-compare", "host", "up", "vpc"}) {
            out.getBuffer().setLength(0);
            assertThat(run(command, "--help")).as(command).isZero();
            assertThat(out.toString()).as(command).contains("Usage: vrdma " + command);
        }
        out.getBuffer().setLength(0);
        assertThat(run("lab", "run", "--help")).isZero();
        assertThat(out.toString()).contains("Usage: vrdma lab run", "--backend");
    }

    @Test
    void linkReportsDeliveryAndLossReproducibly() {
        assertThat(run("link", "--frames", "20000", "--loss", "0.01", "--seed", "5"))
                .isZero();
        String first = out.toString();
        assertThat(first).contains("delivered", "goodput");
        out.getBuffer().setLength(0);
        assertThat(run("link", "--frames", "20000", "--loss", "0.01", "--seed", "5"))
                .isZero();
        assertThat(out.toString()).isEqualTo(first);
    }

    @Test
    void losslessLinkAtLineRateDeliversEverythingAtTheLinkRate() {
        assertThat(run("link", "--rate", "10G", "--frames", "10000", "--frame-bytes", "1250"))
                .isZero();
        // 10000 x 1250 B at 10 Gbit/s = 10 ms of serialisation, plus 5 us of propagation.
        assertThat(out.toString())
                .contains("delivered       10000 (lost on the wire 0")
                .contains("virtual time    10.005 ms");
    }

    @Test
    void badArgumentsGiveAUsageErrorNotAStackTrace() {
        assertThat(run("link", "--loss", "2")).isNotZero();
        assertThat(err.toString()).contains("lossProbability");
        assertThat(run("link", "--frames", "0")).isEqualTo(2);
        assertThat(run("no-such-command")).isEqualTo(2);
    }

    @Test
    void demoInVirtualTimeReportsIntactDataOnACleanAndALossyOverlay() {
        assertThat(run("demo", "--virtual", "--quick", "--loss", "0.01")).isZero();
        String text = out.toString();
        assertThat(text).contains("RDMA_Write BW Test (clean overlay)", "Send Latency Test", "RDMA_Read BW Test");
        assertThat(text).contains("1.00% loss on data and control packets");
        assertThat(text).doesNotContain("CORRUPT");
        assertThat(text).containsPattern("retransmitted [1-9]");
        // The modelled links count what they drop, as the vSwitches do on real UDP.
        assertThat(text).contains("overlay dropped 0 (injected)");
        assertThat(text).containsPattern("overlay dropped [1-9][0-9]* \\(injected\\)");
    }

    @Test
    void demoOverRealUdpMovesIntactDataThroughTheOverlay() {
        assertThat(run("demo", "--quick", "--loss", "0.02")).isZero();
        String text = out.toString();
        assertThat(text).contains("real time: 2 hosts in this process", "Geneve over UDP on 127.0.0.1:");
        assertThat(text).contains("RDMA_Write BW Test (2.00% loss on data and control packets)");
        assertThat(text).doesNotContain("CORRUPT");
        assertThat(text).containsPattern("overlay dropped [1-9][0-9]* \\(injected\\)");
    }

    @Test
    void demoRejectsBadOptions() {
        assertThat(run("demo", "--recovery", "fast")).isEqualTo(2);
        assertThat(run("demo", "--loss", "1.5")).isEqualTo(2);
    }

    @Test
    void ratesParse() {
        assertThat(Units.parseRateBps("100G")).isEqualTo(100_000_000_000L);
        assertThat(Units.parseRateBps("2.5g")).isEqualTo(2_500_000_000L);
        assertThat(Units.parseRateBps("400Mbps")).isEqualTo(400_000_000L);
        assertThatThrownBy(() -> Units.parseRateBps("fast")).hasMessageContaining("not a rate");
        assertThatThrownBy(() -> Units.parseRateBps("-1G")).hasMessageContaining("positive");
    }
}
