package org.vrdma.control.store;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.vrdma.control.api.TokenFile;
import org.vrdma.control.cli.ControlCli;

/** A controller in its own JVM, started with this JVM's java and class path. */
final class ControllerProcess implements AutoCloseable {
    final Process process;
    final String endpoint;
    final String token;

    private ControllerProcess(Process process, String endpoint, String token) {
        this.process = process;
        this.endpoint = endpoint;
        this.token = token;
    }

    static ControllerProcess start(Path dataDir, Path log) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(List.of(
                        java,
                        "-Xmx256m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ControlCli.class.getName(),
                        "controller",
                        "--data-dir",
                        dataDir.toString(),
                        "--port",
                        "0"))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process p = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // The process died: nothing more to read.
            }
        });
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith("controller listening on ")) {
                    String endpoint =
                            line.substring("controller listening on ".length()).strip();
                    return new ControllerProcess(p, endpoint, TokenFile.read(dataDir.resolve(TokenFile.FILE_NAME)));
                }
                if (line == null && !p.isAlive()) {
                    throw new IOException("the controller exited with " + p.exitValue() + "; see " + log);
                }
            }
            throw new IOException("the controller did not start within 60 s; see " + log);
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** SIGKILL: no shutdown hook, no flush, no close. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
