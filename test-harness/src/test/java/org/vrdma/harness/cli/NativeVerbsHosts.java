package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two {@code ./vrdma host --verbs-socket} processes joined over a real UDP underlay, each serving the
 * native {@code libibverbs.so.1} of guest-driver-shim, and helpers that run unmodified verbs
 * programs (perftest, ibverbs-utils) against them: the server side on host A, the client on host B,
 * meeting over the programs' own out-of-band TCP exchange.
 */
final class NativeVerbsHosts implements AutoCloseable {
    /** The library the Maven build makes in guest-driver-shim's compile phase. */
    static final Path NATIVE_DIR = Path.of("..", "guest-driver-shim", "target", "native")
            .toAbsolutePath()
            .normalize();

    private final HostProcesses processes;
    private final Path dir;
    private final List<String> prefixA;
    private final List<String> prefixB;
    final Path socketA;
    final Path socketB;
    /** Where the client finds the server's out-of-band port. */
    final String serverIp;

    private int runs;

    /**
     * @param prefixA command prefix of host A and its programs ({@code ip netns exec NS}, or empty)
     * @param underlayA host A's underlay address (ip:port), likewise B
     * @param serverIp the address of host A that B's programs connect to
     */
    NativeVerbsHosts(
            List<String> prefixA,
            String underlayA,
            String eniA,
            List<String> prefixB,
            String underlayB,
            String eniB,
            String serverIp)
            throws Exception {
        if (!Files.exists(NATIVE_DIR.resolve("libibverbs.so.1"))) {
            throw new AssertionError(NATIVE_DIR + "/libibverbs.so.1 is missing: the Maven build makes it"
                    + " (./test.sh installs gcc and libibverbs-dev)");
        }
        for (String command : List.of("ib_write_bw", "ibv_rc_pingpong")) {
            requireCommand(command);
        }
        this.processes = new HostProcesses();
        this.dir = Files.createTempDirectory("vrdma-native-verbs");
        this.prefixA = prefixA;
        this.prefixB = prefixB;
        this.serverIp = serverIp;
        socketA = dir.resolve("a.sock");
        socketB = dir.resolve("b.sock");
        startHost("hostA", prefixA, socketA, underlayA, eniA, eniB, underlayB);
        startHost("hostB", prefixB, socketB, underlayB, eniB, eniA, underlayA);
        awaitSockets();
    }

    private void startHost(
            String name, List<String> prefix, Path socket, String underlay, String eni, String peerEni, String peer)
            throws IOException {
        processes.start(
                name,
                HostProcesses.javaCommand(
                        prefix,
                        "host",
                        "--verbs-socket",
                        socket.toString(),
                        "--underlay",
                        underlay,
                        "--eni-ip",
                        eni,
                        "--peer-eni-ip",
                        peerEni,
                        "--peer-underlay",
                        peer));
    }

    /**
     * Waits until both hosts accept connections on their sockets. The socket file appears at bind,
     * before the listen: a perftest started in between found no device (seen at load average 25).
     */
    private void awaitSockets() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!(accepts(socketA) && accepts(socketB))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the verbs hosts did not come up in 60 s:\n" + hostOutput());
            }
            Thread.sleep(100);
        }
    }

    /** Whether a connection to {@code socket} is accepted (closed at once; the host drops it). */
    private static boolean accepts(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            return probe.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return false; // bound, not listening yet
        }
    }

    String hostOutput() throws IOException {
        return "host A:\n" + processes.output("hostA") + "\nhost B:\n" + processes.output("hostB");
    }

    /** Both sides' exit codes and output. */
    record Pair(int serverExit, String server, int clientExit, String client) {
        String both() {
            return "server (exit " + serverExit + "):\n" + server + "\nclient (exit " + clientExit + "):\n" + client;
        }
    }

    /**
     * Runs {@code command} on host A as the server and, once its TCP port {@code port} listens,
     * the same command plus the server's address on host B as the client (bounded).
     */
    Pair run(List<String> command, int port, long timeoutS) throws Exception {
        int n = ++runs;
        Path serverOut = dir.resolve("server-" + n + ".out");
        Path clientOut = dir.resolve("client-" + n + ".out");
        Process server = start(prefixA, socketA, command, serverOut);
        try {
            awaitListening(server, port, serverOut);
            List<String> client = new ArrayList<>(command);
            client.add(serverIp);
            Process c = start(prefixB, socketB, client, clientOut);
            try {
                int clientExit = waitFor(c, timeoutS, clientOut);
                int serverExit = waitFor(server, 30, serverOut);
                return new Pair(serverExit, read(serverOut), clientExit, read(clientOut));
            } finally {
                c.destroyForcibly();
            }
        } finally {
            server.destroyForcibly();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Process start(List<String> prefix, Path socket, List<String> command, Path out) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("LD_LIBRARY_PATH", NATIVE_DIR.toString());
        pb.environment().put("VRDMA_SOCKET", socket.toString());
        return pb.start();
    }

    /** Reads the kernel's socket table (of the server's namespace) rather than connecting: perftest accepts once. */
    private void awaitListening(Process server, int port, Path out) throws Exception {
        String hexPort = String.format(":%04X ", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!server.isAlive()) {
                throw new AssertionError("the server exited early (" + server.exitValue() + "):\n" + read(out));
            }
            for (String table : List.of("tcp", "tcp6")) {
                Path p = Path.of("/proc", Long.toString(server.pid()), "net", table);
                try {
                    for (String line : Files.readAllLines(p)) {
                        String[] f = line.trim().split("\\s+");
                        if (f.length > 3 && (f[1] + " ").endsWith(hexPort) && f[3].equals("0A")) {
                            return;
                        }
                    }
                } catch (IOException e) {
                    // table absent (no IPv6) or the process just exited: checked above next round
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("nothing listened on port " + port + " within 30 s:\n" + read(out));
    }

    private static int waitFor(Process p, long timeoutS, Path out) throws Exception {
        if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("did not finish within " + timeoutS + " s:\n" + read(out));
        }
        return p.exitValue();
    }

    private static String read(Path p) throws IOException {
        return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
    }

    static void requireCommand(String command) {
        for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!p.isEmpty() && Files.isExecutable(Path.of(p, command))) {
                return;
            }
        }
        throw new AssertionError(command + " is missing (Debian packages perftest, ibverbs-utils): run ./test.sh,"
                + " which installs what the tests need");
    }

    /** Asserts a perftest bandwidth report: one result line of {@code bytes} and {@code iterations}. */
    static void assertBandwidth(String output, int bytes, int iterations, boolean atomic) {
        var m = java.util.regex.Pattern.compile(
                        "(?m)^\\s*" + bytes + "\\s+" + iterations + "\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s*$")
                .matcher(output);
        assertThat(m.find()).as(output).isTrue();
        double average = Double.parseDouble(m.group(2));
        double messageRate = Double.parseDouble(m.group(3));
        if (atomic) {
            assertThat(messageRate).as("message rate [Mpps]: " + output).isPositive();
        } else {
            assertThat(average).as("average bandwidth [MB/s]: " + output).isPositive();
        }
    }

    /** Asserts a perftest latency report for {@code bytes} and {@code iterations}. */
    static void assertLatency(String output, int bytes, int iterations) {
        var m = java.util.regex.Pattern.compile("(?m)^\\s*" + bytes + "\\s+" + iterations
                        + "\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)")
                .matcher(output);
        assertThat(m.find()).as(output).isTrue();
        double min = Double.parseDouble(m.group(1));
        double typical = Double.parseDouble(m.group(3));
        assertThat(min).as(output).isPositive();
        assertThat(typical).as(output).isGreaterThanOrEqualTo(min);
    }

    /** No error line of libibverbs, perftest or the vNIC library. */
    static void assertNoErrors(String output) {
        assertThat(output).doesNotContainIgnoringCase("error").doesNotContain("Couldn't", "Failed", "Unable", "vrdma:");
    }

    @Override
    public void close() throws Exception {
        try {
            processes.close();
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }
}
