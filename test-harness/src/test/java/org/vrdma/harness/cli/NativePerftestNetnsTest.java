package org.vrdma.harness.cli;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.vrdma.harness.cli.NativePerftestTest.NativePerftestRuns;

/**
 * The unmodified perftest programs and {@code ibv_rc_pingpong} between two emulator hosts in two
 * network namespaces joined by a veth pair, as on two machines: each verbs host and the programs
 * that use it run under {@code ip netns exec}. Namespace and link names carry "shim" and this JVM's
 * pid; they and the addresses (192.168.214.0/30) exist only inside what this test creates and are
 * deleted afterwards, also when the test fails or the JVM exits. Needs root and iproute2.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NativePerftestNetnsTest {
    private static final long PID = ProcessHandle.current().pid();
    private static final String NS_A = "vrdmashim-" + PID + "-a";
    private static final String NS_B = "vrdmashim-" + PID + "-b";
    private static final String DEV_A = "vsh" + (PID % 1_000_000) + "a";
    private static final String DEV_B = "vsh" + (PID % 1_000_000) + "b";
    private static final String IP_A = "192.168.214.1";
    private static final String IP_B = "192.168.214.2";
    private static final int ITERATIONS = 200;

    private NativeVerbsHosts hosts;
    private final Thread cleanupHook = new Thread(NativePerftestNetnsTest::deleteNamespacesQuietly);

    @BeforeAll
    void createNamespacesAndHosts() throws Exception {
        HostNetnsTest.requireRootAndIp();
        deleteNamespacesQuietly();
        Runtime.getRuntime().addShutdownHook(cleanupHook);
        ip("netns", "add", NS_A);
        ip("netns", "add", NS_B);
        ip("link", "add", DEV_A, "netns", NS_A, "type", "veth", "peer", "name", DEV_B, "netns", NS_B);
        ip("-n", NS_A, "addr", "add", IP_A + "/30", "dev", DEV_A);
        ip("-n", NS_B, "addr", "add", IP_B + "/30", "dev", DEV_B);
        for (String[] nsDev : new String[][] {{NS_A, DEV_A}, {NS_B, DEV_B}}) {
            // Jumbo frames, so a 4096-byte RoCE MTU fits one Geneve datagram.
            ip("-n", nsDev[0], "link", "set", nsDev[1], "mtu", "9000", "up");
            ip("-n", nsDev[0], "link", "set", "lo", "up");
        }
        hosts = new NativeVerbsHosts(
                List.of("ip", "netns", "exec", NS_A),
                IP_A + ":6081",
                "10.8.0.1",
                List.of("ip", "netns", "exec", NS_B),
                IP_B + ":6081",
                "10.8.0.2",
                IP_A);
    }

    @AfterAll
    void removeEverything() throws Exception {
        try {
            if (hosts != null) {
                hosts.close();
            }
        } finally {
            deleteNamespacesQuietly();
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        }
        org.assertj.core.api.Assertions.assertThat(run(List.of("ip", "netns", "list")))
                .doesNotContain(NS_A, NS_B);
    }

    @Test
    void ibvRcPingpongExchangesEveryIteration() throws Exception {
        NativePerftestRuns.rcPingpong(hosts);
    }

    @Test
    void ibWriteBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_write_bw", 65536, ITERATIONS);
    }

    @Test
    void ibReadBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_read_bw", 65536, ITERATIONS);
    }

    @Test
    void ibSendBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_send_bw", 65536, ITERATIONS);
    }

    @Test
    void ibAtomicBwReportsAMessageRate() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_atomic_bw", 8, ITERATIONS);
    }

    @Test
    void ibWriteLatReportsLatency() throws Exception {
        NativePerftestRuns.latency(hosts, "ib_write_lat", 2, ITERATIONS);
    }

    @Test
    void ibSendLatReportsLatency() throws Exception {
        NativePerftestRuns.latency(hosts, "ib_send_lat", 2, ITERATIONS);
    }

    /** Deleting a namespace deletes the veth end inside it, and with it the pair. */
    private static void deleteNamespacesQuietly() {
        for (String ns : List.of(NS_A, NS_B)) {
            try {
                Process p = new ProcessBuilder("ip", "netns", "delete", ns)
                        .redirectErrorStream(true)
                        .start();
                p.getInputStream().readAllBytes();
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                // absent already, or ip missing (reported by requireRootAndIp)
            }
        }
    }

    private static void ip(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        String out = run(cmd);
        org.assertj.core.api.Assertions.assertThat(out).doesNotContain("Error");
    }

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in 30 s");
        }
        String text = new String(output, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed (" + p.exitValue() + "): " + text);
        }
        return text;
    }
}
