package org.vrdma.control.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code controller} and {@code up} given an API port they cannot listen on, run as the launcher runs
 * them (a JVM of their own, its stderr read): out of range is a usage error (exit 2), a port in use
 * one line saying so (exit 1); neither prints a stack trace.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListenErrorsTest {
    @TempDir
    Path dir;

    private record Run(int exit, String stderr) {}

    private Run run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                ControlCli.class.getName()));
        command.addAll(List.of(args));
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process p = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(err.toFile())
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("did not finish: " + command);
        }
        return new Run(p.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void aPortOutOfRangeIsAUsageError() throws Exception {
        String data = dir.resolve("a").toString();
        Run controller = run("controller", "--port", "99999", "--data-dir", data, "--run-seconds", "1");
        Run up = run("up", "--port", "99999", "--data-plane", "memory", "--data-dir", data, "--run-seconds", "1");
        for (Run r : List.of(controller, up)) {
            assertThat(r.exit()).as(r.stderr()).isEqualTo(2);
            assertThat(r.stderr()).contains("--port must be 0..65535").doesNotContain("\tat ", "Exception");
        }
    }

    @Test
    void aPortInUseIsOneLineAndExitOne() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            String port = String.valueOf(taken.getLocalPort());
            Run controller = run(
                    "controller", "--port", port, "--data-dir", dir.resolve("c").toString(), "--run-seconds", "1");
            Run up = run(
                    "up",
                    "--port",
                    port,
                    "--data-plane",
                    "memory",
                    "--data-dir",
                    dir.resolve("u").toString(),
                    "--run-seconds",
                    "1");
            assertThat(controller.exit()).as(controller.stderr()).isEqualTo(1);
            assertThat(controller.stderr()).contains("vrdma controller: cannot listen on 127.0.0.1:" + port);
            assertThat(up.exit()).as(up.stderr()).isEqualTo(1);
            assertThat(up.stderr()).contains("vrdma up: cannot listen on 127.0.0.1:" + port);
            for (Run r : List.of(controller, up)) {
                assertThat(r.stderr()).doesNotContain("\tat ", "Failed to start");
            }
        }
    }
}
