package org.vrdma.vswitch.tap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Network namespaces a test creates, named {@code vrtap-<pid>-<suffix>} so parallel runs never
 * collide, and always deleted by {@link #close()}; {@link #run} runs a command and returns its exit
 * code and output.
 */
final class TestNamespaces implements AutoCloseable {
    static final String PREFIX = "vrtap-" + ProcessHandle.current().pid() + "-";
    private final List<String> created = new ArrayList<>();

    /** Output and exit code of a finished command. */
    record Result(int exit, String output) {}

    TestNamespaces() {
        String uid = run(List.of("id", "-u"), 10).output().strip();
        if (!uid.equals("0")) {
            throw new AssertionError("TAP tests must run as root (uid is " + uid + "); CI runs them as root");
        }
    }

    String add(String suffix) {
        String name = PREFIX + suffix;
        check(List.of("ip", "netns", "add", name));
        created.add(name);
        check(List.of("ip", "-n", name, "link", "set", "lo", "up"));
        return name;
    }

    /** Runs {@code command} inside namespace {@code ns}. */
    static Result exec(String ns, int timeoutS, String... command) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(List.of(command));
        return run(cmd, timeoutS);
    }

    static void check(List<String> command) {
        Result r = run(command, 30);
        if (r.exit() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed (" + r.exit() + "): " + r.output());
        }
    }

    static Result run(List<String> command, int timeoutS) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            // Output is small (ping, iperf3 summaries); read it after the process ends or is killed.
            if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return new Result(-1, new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted: " + String.join(" ", command), e);
        }
    }

    @Override
    public void close() {
        for (String ns : created) {
            run(List.of("ip", "netns", "delete", ns), 30);
        }
        created.clear();
    }
}
