package org.vrdma.harness.cli;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.vrdma.harness.backend.VrdmaJava;

/** Starts {@code ./vrdma host} in child JVMs with this JVM's java and class path, output to files. */
final class HostProcesses implements AutoCloseable {
    private final Path dir;
    private final List<Process> processes = new ArrayList<>();

    HostProcesses() throws IOException {
        dir = Files.createTempDirectory("vrdma-host-test");
    }

    /** The command line running the launcher's main class, optionally behind a prefix (ip netns exec NS). */
    static List<String> javaCommand(List<String> prefix, String... args) {
        List<String> cmd = new ArrayList<>(VrdmaJava.command(prefix, null, List.of(args)));
        // As the ./vrdma launcher runs it: Netty reaches direct memory through Unsafe.
        cmd.addAll(prefix.size() + 1, List.of("--sun-misc-unsafe-memory-access=allow", "-Dio.netty.noUnsafe=false"));
        return cmd;
    }

    Process start(String name, List<String> command) throws IOException {
        Process p = new ProcessBuilder(command)
                .redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile())
                .start();
        processes.add(p);
        return p;
    }

    String output(String name) throws IOException {
        return read(name + ".out") + read(name + ".err");
    }

    private String read(String file) throws IOException {
        Path p = dir.resolve(file);
        return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
    }

    /** Waits for {@code p} to exit; kills it and fails if it does not within the limit. */
    static int waitFor(Process p, long timeout, TimeUnit unit, String what) throws InterruptedException {
        if (!p.waitFor(timeout, unit)) {
            p.destroyForcibly();
            throw new AssertionError(what + " did not finish within " + timeout + " " + unit);
        }
        return p.exitValue();
    }

    /** A UDP port free on {@code ip} right now. */
    static int freeUdpPort(String ip) throws IOException {
        try (DatagramSocket s = new DatagramSocket(0, InetAddress.getByName(ip))) {
            return s.getLocalPort();
        }
    }

    /** A TCP port free on {@code ip} right now. */
    static int freeTcpPort(String ip) throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(ip))) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        for (Process p : processes) {
            if (p.isAlive()) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }
}
