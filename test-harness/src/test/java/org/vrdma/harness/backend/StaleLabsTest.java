package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.vrdma.harness.cli.VrdmaCli;
import picocli.CommandLine;

/**
 * A lab whose process was killed with SIGKILL (no shutdown hook) leaves its host processes,
 * namespaces, Docker objects and temporary directory; {@code ./vrdma lab cleanup} removes them, and
 * nothing of a lab whose process still runs. Needs root and a Docker engine, as the backends do.
 */
class StaleLabsTest {
    private static final String PREFIX = "vrdma-stale";
    // Above the kernel's largest pid (4194304): this lab's owner surely no longer runs.
    private static final String DEAD = PREFIX + "-4999999-1";
    private static final String LIVE = PREFIX + "-" + ProcessHandle.current().pid() + "-1";

    @Test
    void cleanupRemovesWhatAKilledLabLeftAndNothingOfALiveOne() throws Exception {
        // The DEAD names are fixed: a run of this test killed before its own cleanup left them.
        deleteNamespaces();
        Process inNamespace = null;
        Process marked = null;
        Path tmp = null;
        Path liveTmp = null;
        DockerClient docker = null;
        try {
            Commands.run("ip", "netns", "add", DEAD);
            Commands.run("ip", "netns", "add", DEAD + "-h0");
            Commands.run("ip", "netns", "add", LIVE + "-h0");
            inNamespace = new ProcessBuilder("ip", "netns", "exec", DEAD + "-h0", "sleep", "120").start();
            // A host process elsewhere, found by its lab marker only.
            marked = new ProcessBuilder("sh", "-c", "sleep 120; :", "-D" + VrdmaJava.LAB_PROPERTY + "=" + DEAD).start();
            tmp = Files.createTempDirectory(DEAD);
            Files.writeString(tmp.resolve("h0.out"), "output of a host");
            liveTmp = Files.createTempDirectory(LIVE);
            docker = DockerClientFactory.instance().client();
            docker.createNetworkCmd().withName(DEAD).exec();

            String listed = cli("lab", "cleanup", "--prefix", PREFIX, "--dry-run");
            assertThat(listed).contains("would remove network namespace " + DEAD + "-h0");
            assertThat(Commands.run("ip", "netns", "list")).contains(DEAD);
            assertThat(marked.isAlive()).isTrue();

            String out = cli("lab", "cleanup", "--prefix", PREFIX);
            assertThat(out)
                    .contains(
                            "removed process " + marked.pid() + " of lab " + DEAD,
                            "removed network namespace " + DEAD + "-h0",
                            "removed network namespace " + DEAD + "\n",
                            "removed Docker network " + DEAD,
                            "removed directory " + tmp)
                    .doesNotContain(LIVE);
            assertThat(marked.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(inNamespace.waitFor(10, TimeUnit.SECONDS)).isTrue();
            String namespaces = Commands.run("ip", "netns", "list");
            assertThat(namespaces).doesNotContain(DEAD).contains(LIVE + "-h0");
            assertThat(tmp).doesNotExist();
            assertThat(liveTmp).isDirectory();
            assertThat(docker.listNetworksCmd().withNameFilter(DEAD).exec()).isEmpty();
            assertThat(cli("lab", "cleanup", "--prefix", PREFIX)).contains("nothing left behind");
        } finally {
            // Whatever the setup got to before a failure (no Docker engine, say) is removed too.
            if (marked != null) {
                marked.destroyForcibly();
            }
            if (inNamespace != null) {
                inNamespace.destroyForcibly();
            }
            deleteNamespaces();
            if (docker != null) {
                DockerClient client = docker;
                client.listNetworksCmd()
                        .withNameFilter(DEAD)
                        .exec()
                        .forEach(n -> client.removeNetworkCmd(n.getId()).exec());
            }
            if (tmp != null) {
                Files.deleteIfExists(tmp.resolve("h0.out"));
                Files.deleteIfExists(tmp);
            }
            if (liveTmp != null) {
                Files.deleteIfExists(liveTmp);
            }
        }
    }

    /** Deletes this test's namespaces where they exist. */
    private static void deleteNamespaces() {
        for (String ns : List.of(DEAD + "-h0", DEAD, LIVE + "-h0")) {
            try {
                Commands.run("ip", "netns", "delete", ns);
            } catch (java.io.IOException gone) {
                // not there: removed by the cleanup, or never made
            }
        }
    }

    private static String cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CommandLine cli = new CommandLine(VrdmaCli.class);
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(out, true));
        int exit = cli.execute(args);
        String text = out.toString();
        assertThat(exit).as(text).isZero();
        return text;
    }
}
