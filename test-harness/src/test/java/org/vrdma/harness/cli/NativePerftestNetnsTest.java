package org.vrdma.harness.cli;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The unmodified perftest programs and {@code ibv_rc_pingpong} between two emulator hosts in two
 * network namespaces joined by a veth pair, as on two machines: each verbs host and the programs
 * that use it run under {@code ip netns exec}. Namespace and link names carry "shim" and this JVM's
 * pid; they and the addresses (192.168.214.0/30) exist only inside what this test creates and are
 * deleted afterwards, also when the test fails or the JVM exits. Needs root and iproute2. The programs
 * and assertions are those of {@link NativePerftestCases}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NativePerftestNetnsTest extends NativePerftestCases {
    private static final long PID = ProcessHandle.current().pid();
    private static final String NS_A = "vrdmashim-" + PID + "-a";
    private static final String NS_B = "vrdmashim-" + PID + "-b";
    private static final String DEV_A = "vsh" + (PID % 1_000_000) + "a";
    private static final String DEV_B = "vsh" + (PID % 1_000_000) + "b";
    private static final String IP_A = "192.168.214.1";
    private static final String IP_B = "192.168.214.2";

    private NativeVerbsHosts hosts;
    private final Thread cleanupHook = new Thread(NativePerftestNetnsTest::deleteNamespacesQuietly);

    @BeforeAll
    void createNamespacesAndHosts() throws Exception {
        NetnsPair.requireRootAndIp();
        deleteNamespacesQuietly();
        Runtime.getRuntime().addShutdownHook(cleanupHook);
        NetnsPair.create(NS_A, DEV_A, IP_A, NS_B, DEV_B, IP_B);
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
        org.assertj.core.api.Assertions.assertThat(NetnsPair.run(List.of("ip", "netns", "list")))
                .doesNotContain(NS_A, NS_B);
    }

    @Override
    NativeVerbsHosts hosts() {
        return hosts;
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
}
