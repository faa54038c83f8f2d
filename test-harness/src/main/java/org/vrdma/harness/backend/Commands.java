package org.vrdma.harness.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short system commands (ip, kill) and fails with their output when they fail. */
final class Commands {
    private Commands() {}

    /** Runs {@code command}, waits at most 30 s, returns its output; throws on a non-zero exit. */
    static String run(String... command) throws IOException {
        return run(List.of(command));
    }

    static String run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " interrupted", e);
        }
        String text = new String(output, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + text.strip());
        }
        return text;
    }

    static List<String> ip(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        return cmd;
    }
}
