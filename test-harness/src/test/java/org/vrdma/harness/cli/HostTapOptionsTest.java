package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The TAP, QoS and delivery-loss options of {@code ./vrdma host}: bad values are usage errors (exit 2). */
class HostTapOptionsTest {
    @TempDir
    Path dir;

    private Path socket;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... extra) {
        return runHost("--client", extra);
    }

    private int runHost(String mode, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "host",
                mode,
                "--underlay",
                "127.0.0.1:0",
                "--eni-ip",
                "10.0.0.1",
                "--peer-eni-ip",
                "10.0.0.2",
                "--peer-underlay",
                "127.0.0.1:1"));
        if (mode.equals("--verbs-socket")) {
            args.add(2, socket.toString());
        }
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
        // --host-link is a lab file's link, validated as one.
        assertThat(run("--host-link", "{\"faults\": {\"loss\": 2}}")).isEqualTo(2);
        assertThat(err.toString()).contains("hostLink.faults.loss");
        assertThat(run("--host-link", "{\"rateGbps\": 10, \"colour\": 1}")).isEqualTo(2);
        assertThat(err.toString()).contains("not a link: Unrecognized field \"colour\"");
        assertThat(run("--host-link", "{\"rateGbps\": 10}", "--loss", "0.01")).isEqualTo(2);
        assertThat(err.toString()).contains("give the loss in --host-link's faults");
    }

    /**
     * What TapConfig and the ENI would refuse once the host runs (name, prefix, MTU, namespace, the
     * extra ENI's VNI, a group MAC) is refused with the arguments, before any socket or device.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void tapDevicesAndTheEniMacAreCheckedWithTheArguments() {
        String[] quick = {"--connect-timeout", "1", "--oob-port", "9"};
        assertThat(run(with(quick, "--tap", "t", "--tap-mtu", "0"))).isEqualTo(2);
        assertThat(err.toString()).contains("--tap: MTU must be 576..65000: 0");
        assertThat(run(with(quick, "--tap", "t", "--tap-mtu", "100000"))).isEqualTo(2);
        assertThat(run(with(quick, "--tap", "t", "--tap-prefix", "40"))).isEqualTo(2);
        assertThat(err.toString()).contains("--tap: prefix length must be 1..32: 40");
        assertThat(run(with(quick, "--tap", "averyveryverylongtapname"))).isEqualTo(2);
        assertThat(err.toString()).contains("TAP name must be 1..15");
        assertThat(run(with(quick, "--tap", "t", "--tap-netns", "a b"))).isEqualTo(2);
        assertThat(run(with(quick, "--tap-eni", "vni=99999999,ip=10.1.1.1,peer=10.1.1.2,tap=t2")))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--tap-eni: vni must be 1..16777215");
        assertThat(run(with(quick, "--tap-eni", "vni=0,ip=10.1.1.1,peer=10.1.1.2,tap=t2")))
                .isEqualTo(2);
        assertThat(run(with(quick, "--tap-eni", "vni=200,ip=10.1.1.1,peer=10.1.1.2,tap=a/b")))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--tap-eni: TAP name must be 1..15");
        assertThat(run(with(quick, "--eni-mac", "ff:ff:ff:ff:ff:ff"))).isEqualTo(2);
        assertThat(err.toString()).contains("--eni-mac must be a unicast address");
        assertThat(run(with(quick, "--eni-mac", "01:00:5e:00:00:01"))).isEqualTo(2);
        assertThat(run(with(quick, "--eni-mac", "00:00:00:00:00:00"))).isEqualTo(2);
        assertThat(out.toString()).as("no host started").doesNotContain("vrdma host: client");
    }

    private static String[] with(String[] head, String... tail) {
        List<String> all = new ArrayList<>(List.of(head));
        all.addAll(List.of(tail));
        return all.toArray(String[]::new);
    }

    /**
     * A verbs host takes the same ENI options; a bad one must stop it before it starts (a good
     * set would serve until killed), with the usage message rather than a parser's.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aVerbsHostRefusesBadEniOptionsBeforeItStarts() {
        socket = dir.resolve("verbs.sock");
        assertThat(runHost("--verbs-socket", "--eni-rate", "fast")).isEqualTo(2);
        assertThat(err.toString()).contains("--eni-rate must be a rate").doesNotContain("For input string");
        assertThat(runHost("--verbs-socket", "--eni-rate", "100M", "--qos-weights", "x"))
                .isEqualTo(2);
        assertThat(runHost("--verbs-socket", "--eni-loss", "5")).isEqualTo(2);
        assertThat(err.toString()).contains("--eni-loss must be in [0, 1)");
        assertThat(runHost("--verbs-socket", "--tap-eni", "vni=x,ip=10.0.0.5,peer=10.0.0.6,tap=t"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--tap-eni: bad vni, ip or peer");
        assertThat(runHost("--verbs-socket", "--tap-eni", "foo")).isEqualTo(2);
        assertThat(runHost("--verbs-socket", "--stats-interval", "-5")).isEqualTo(2);
        assertThat(runHost("--verbs-socket", "--vni", "0")).isEqualTo(2);
        assertThat(runHost("--verbs-socket", "--eni-mac", "02:00")).isEqualTo(2);
        assertThat(runHost("--verbs-socket", "--oob-via-eni")).isEqualTo(2);
        assertThat(err.toString()).contains("--oob-via-eni is for --server and --client");
        assertThat(out.toString()).as("no host started").doesNotContain("serving verbs");
        assertThat(socket).doesNotExist();
    }
}
