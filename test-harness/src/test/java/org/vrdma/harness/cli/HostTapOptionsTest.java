package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The TAP, QoS and delivery-loss options of {@code ./vrdma host}: bad values are usage errors (exit 2). */
class HostTapOptionsTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "host",
                "--client",
                "--underlay",
                "127.0.0.1:0",
                "--eni-ip",
                "10.0.0.1",
                "--peer-eni-ip",
                "10.0.0.2",
                "--peer-underlay",
                "127.0.0.1:1"));
        args.addAll(List.of(extra));
        CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args.toArray(String[]::new));
    }

    @Test
    void badTapQosAndLossOptionsAreUsageErrors() {
        assertThat(run("--eni-loss", "1")).isEqualTo(2);
        assertThat(err.toString()).contains("--eni-loss must be in [0, 1)");
        assertThat(run("--eni-rate", "fast")).isEqualTo(2);
        assertThat(err.toString()).contains("--eni-rate must be a rate");
        assertThat(run("--eni-rate", "100M", "--qos-weights", "3")).isEqualTo(2);
        assertThat(run("--eni-rate", "100M", "--qos-weights", "0:1")).isEqualTo(2);
        assertThat(run("--tap-eni", "vni=200,ip=10.0.0.1")).isEqualTo(2);
        assertThat(err.toString()).contains("--tap-eni needs peer=");
        assertThat(run("--tap-eni", "vni=200,ip=10.0.0.x,peer=10.0.0.2,tap=t")).isEqualTo(2);
        assertThat(err.toString()).contains("--tap-eni: bad vni, ip or peer");
        assertThat(run("--oob-via-eni")).isEqualTo(2);
        assertThat(err.toString()).contains("--oob-via-eni needs --tap");
        assertThat(run("--tap", "vpc1", "--tap-netns", "guest", "--oob-via-eni"))
                .isEqualTo(2);
        assertThat(run("--stats-interval", "-1")).isEqualTo(2);
    }
}
