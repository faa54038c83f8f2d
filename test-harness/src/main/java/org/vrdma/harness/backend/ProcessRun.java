package org.vrdma.harness.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A host run as a child process, its output in two files of the lab's directory. */
final class ProcessRun implements HostRun {
    private final Process process;
    private final Path out;
    private final Path err;

    private ProcessRun(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    static ProcessRun start(List<String> command, Path dir, String name) throws IOException {
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        Process p = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        return new ProcessRun(p, out, err);
    }

    @Override
    public int await(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            kill();
            return TIMED_OUT;
        }
        return process.exitValue();
    }

    @Override
    public boolean finished() {
        return !process.isAlive();
    }

    @Override
    public String output() {
        return read(out) + read(err);
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(cannot read " + p + ": " + e.getMessage() + ")";
        }
    }

    @Override
    public void kill() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
