package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two network namespaces joined by a jumbo-frame veth pair, as two machines on one link, for the
 * tests that run emulator hosts under {@code ip netns exec}; plus the {@code ip} commands those tests
 * use to build and remove it. Needs root and iproute2; the tests fail (do not skip) without them.
 */
final class NetnsPair {
    private NetnsPair() {}

    /** Fails the test unless it runs as root with iproute2 installed. */
    static void requireRootAndIp() throws Exception {
        String uid = run(List.of("id", "-u")).strip();
        if (!uid.equals("0")) {
            throw new AssertionError(
                    "the network-namespace test must run as root (uid is " + uid + "); CI runs it as root");
        }
        try {
            run(List.of("ip", "-V"));
        } catch (IOException e) {
            throw new AssertionError("the network-namespace test needs iproute2's `ip` (./test.sh installs it)", e);
        }
    }

    /**
     * Creates namespaces {@code nsA} and {@code nsB} joined by veth {@code devA}/{@code devB} with
     * addresses {@code ipA}/{@code ipB} in a /30, MTU 9000, and loopback up in each.
     */
    static void create(String nsA, String devA, String ipA, String nsB, String devB, String ipB) throws Exception {
        ip("netns", "add", nsA);
        ip("netns", "add", nsB);
        // Created straight into the namespaces: nothing appears in the namespace running the test.
        ip("link", "add", devA, "netns", nsA, "type", "veth", "peer", "name", devB, "netns", nsB);
        ip("-n", nsA, "addr", "add", ipA + "/30", "dev", devA);
        ip("-n", nsB, "addr", "add", ipB + "/30", "dev", devB);
        for (String[] nsDev : new String[][] {{nsA, devA}, {nsB, devB}}) {
            // Jumbo frames, so a 4096-byte RoCE MTU fits one Geneve datagram.
            ip("-n", nsDev[0], "link", "set", nsDev[1], "mtu", "9000", "up");
            ip("-n", nsDev[0], "link", "set", "lo", "up");
        }
    }

    /** Runs {@code ip args...}; fails on a non-zero exit or an error printed with exit 0. */
    static void ip(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        assertThat(run(cmd)).doesNotContain("Error");
    }

    /** Runs {@code command} for at most 30 s and returns its output; fails on a non-zero exit. */
    static String run(List<String> command) throws Exception {
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
