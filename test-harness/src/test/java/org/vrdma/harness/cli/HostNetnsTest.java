package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Two hosts in two network namespaces joined by a veth pair, as two machines on a jumbo-frame
 * link: each {@code ./vrdma host} runs under {@code ip netns exec}. The namespaces, the veth pair
 * and the addresses (192.168.213.0/30) exist only inside what this test creates, and are deleted
 * afterwards. Needs root and iproute2; fails (does not skip) without them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostNetnsTest {
    static final String PREFIX = "vrdmatest-";
    private static final String NS_A = PREFIX + "a";
    private static final String NS_B = PREFIX + "b";
    private static final String IP_A = "192.168.213.1";
    private static final String IP_B = "192.168.213.2";
    private static final long GIB = 1L << 30;

    private HostProcesses processes;

    @BeforeEach
    void setUp() throws Exception {
        NetnsPair.requireRootAndIp();
        deleteLeftovers();
        processes = new HostProcesses();
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (processes != null) {
                processes.close();
            }
        } finally {
            deleteLeftovers();
        }
    }

    @Test
    @Order(1)
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void oneGibibyteOfRdmaWritesCrossesTwoNamespacesByteExactUnderOnePercentLoss() throws Exception {
        NetnsPair.create(NS_A, "vrdma-a", IP_A, NS_B, "vrdma-b", IP_B);
        int size = 64 << 10;
        long iterations = GIB / size;
        Process server = processes.start(
                "server",
                HostProcesses.javaCommand(
                        List.of("ip", "netns", "exec", NS_A),
                        "host",
                        "--server",
                        "--underlay",
                        IP_A + ":6081",
                        "--eni-ip",
                        "10.7.0.1",
                        "--peer-eni-ip",
                        "10.7.0.2",
                        "--peer-underlay",
                        IP_B + ":6081",
                        "--loss",
                        "0.01",
                        "--connect-timeout",
                        "60",
                        "--test-timeout",
                        "290"));
        Process client = processes.start(
                "client",
                HostProcesses.javaCommand(
                        List.of("ip", "netns", "exec", NS_B),
                        "host",
                        "--client",
                        "--underlay",
                        IP_B + ":6081",
                        "--eni-ip",
                        "10.7.0.2",
                        "--peer-eni-ip",
                        "10.7.0.1",
                        "--peer-underlay",
                        IP_A + ":6081",
                        "--loss",
                        "0.01",
                        "--test",
                        "write_bw",
                        "--size",
                        String.valueOf(size),
                        "--iterations",
                        String.valueOf(iterations),
                        "--verify",
                        "--connect-timeout",
                        "60",
                        "--test-timeout",
                        "290"));
        int clientExit = HostProcesses.waitFor(client, 300, TimeUnit.SECONDS, "client");
        int serverExit = HostProcesses.waitFor(server, 30, TimeUnit.SECONDS, "server");
        String clientOut = processes.output("client");
        String serverOut = processes.output("server");
        System.out.println(clientOut);
        System.out.println(serverOut);
        assertThat(clientExit).as(clientOut).isZero();
        assertThat(serverExit).as(serverOut).isZero();
        assertThat(clientOut)
                .contains("vSwitch on " + IP_B + ":6081", "1.00% loss on the uplink")
                .contains("moved " + GIB + " bytes")
                .contains("verify: " + GIB + " bytes byte-exact")
                .containsPattern(" 65536\\s+" + iterations + "\\s+\\d+\\.\\d+\\s+\\d+\\.\\d+\\s+intact");
        assertThat(serverOut).contains("verify: " + GIB + " bytes written by the client, byte-exact");
        // 1% loss on both uplinks: the overlay dropped frames and the transport repaired them.
        assertThat(retransmitted(clientOut)).isPositive();
        assertThat(injectedDrops(clientOut)).isPositive();
        assertThat(injectedDrops(serverOut)).isPositive();
    }

    @Test
    @Order(2)
    void noNamespaceOfThisTestIsLeftBehind() throws Exception {
        deleteLeftovers();
        assertThat(ourNamespaces()).isEmpty();
    }

    private static long retransmitted(String output) {
        var m = java.util.regex.Pattern.compile("retransmitted (\\d+)").matcher(output);
        assertThat(m.find()).as(output).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static long injectedDrops(String output) {
        var m = java.util.regex.Pattern.compile("overlay dropped (\\d+) \\(injected\\)")
                .matcher(output);
        assertThat(m.find()).as(output).isTrue();
        return Long.parseLong(m.group(1));
    }

    /** Namespaces with this test's prefix, from an earlier run that died or this one. */
    static List<String> ourNamespaces() throws Exception {
        List<String> names = new ArrayList<>();
        for (String line : NetnsPair.run(List.of("ip", "netns", "list")).split("\n")) {
            String name = line.strip().split(" ")[0];
            if (name.startsWith(PREFIX)) {
                names.add(name);
            }
        }
        return names;
    }

    static void deleteLeftovers() throws Exception {
        for (String ns : ourNamespaces()) {
            // Deleting a namespace deletes the veth end inside it, and with it the pair.
            NetnsPair.run(List.of("ip", "netns", "delete", ns));
        }
    }
}
