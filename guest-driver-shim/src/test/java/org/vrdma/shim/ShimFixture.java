package org.vrdma.shim;

import static org.assertj.core.api.Assertions.fail;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vswitch.runtime.EventLoopTimerService;

/**
 * A vNIC device on its own event loop, its control server on a socket in a fresh temporary
 * directory, and helpers to run real programs against the built native library.
 */
final class ShimFixture implements AutoCloseable {
    /** 10.0.0.5, the ENI address of the test device. */
    static final int ENI_IPV4 = (10 << 24) | 5;

    static final long ENI_MAC = 0x02_00_0a_00_00_05L;
    static final Path NATIVE_DIR = Path.of("target", "native").toAbsolutePath();
    /** Bound on a task of the device's loop that the fixture waits for (set-up, close). */
    static final long LOOP_WAIT_S = 60;

    final Path dir;
    final DefaultEventLoop loop;
    final Device device;
    final VnicControlServer server;
    private final List<Process> processes = new ArrayList<>();
    /** Set on the device's loop by whoever closes the device. */
    boolean deviceClosed;

    final EventLoopTimerService timers;

    ShimFixture() throws Exception {
        this(ENI_IPV4, ENI_MAC, null);
    }

    /**
     * A device of ENI address {@code ipv4} whose wire leads to {@code peer}'s device, or loops back
     * into itself when {@code peer} is null (QPs of this vNIC talk to each other, as two
     * applications on one host do). Frames cross through the receiving loop, never re-entrantly.
     */
    private ShimFixture(final int ipv4, final long mac, final ShimFixture[] peer) throws Exception {
        requireFile(NATIVE_DIR.resolve("libibverbs.so.1"), "the Maven build (compile phase) makes it");
        dir = Files.createTempDirectory("vrdma-shim-test");
        loop = new DefaultEventLoop();
        timers = new EventLoopTimerService(loop.next());
        final ShimFixture self = this;
        device = loop.submit(() -> Device.builder()
                        .name("vrdma0")
                        .ipv4(ipv4)
                        .mac(mac)
                        .timers(timers)
                        .codec(new RocePacketCodec())
                        .allocator(ByteBufAllocator.DEFAULT)
                        .sink((frame, nowNs) -> {
                            final ShimFixture to = peer == null ? self : peer[0];
                            to.loop.execute(() -> to.device.onFrame(frame, to.timers.nowNs()));
                        })
                        .build())
                // Generous: the first device of a test JVM on a loaded machine took over 5 s.
                .get(LOOP_WAIT_S, TimeUnit.SECONDS);
        server = VnicControlServer.start(dir.resolve("vnic.sock"), device, loop);
    }

    /** Two hosts, 10.0.0.5 and 10.0.0.6, each a vNIC with its own control socket, wired to each other. */
    static ShimFixture[] pair() throws Exception {
        final ShimFixture[] a = new ShimFixture[1];
        final ShimFixture[] b = new ShimFixture[1];
        a[0] = new ShimFixture(ENI_IPV4, ENI_MAC, b);
        try {
            b[0] = new ShimFixture(ENI_IPV4 + 1, ENI_MAC + 1, a);
        } catch (final Exception e) {
            a[0].close();
            throw e;
        }
        return new ShimFixture[] {a[0], b[0]};
    }

    /** Environment that points a program at the built library and this server. */
    Map<String, String> env() {
        return Map.of(
                "LD_LIBRARY_PATH",
                NATIVE_DIR.toString(),
                "VRDMA_SOCKET",
                server.socketPath().toString());
    }

    /** Fails (never skips) when a command the tests need is missing. */
    static void requireCommand(final String command, final String debianPackage) {
        for (final String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!p.isEmpty() && Files.isExecutable(Path.of(p, command))) {
                return;
            }
        }
        fail(command + " is missing (Debian package " + debianPackage
                + "): run ./test.sh, which installs the packages the tests need");
    }

    static void requireFile(final Path file, final String hint) {
        if (!Files.exists(file)) {
            fail(file + " is missing (" + hint + "; run ./test.sh, which installs what the tests need)");
        }
    }

    /** A started program whose output lines are collected as they come. */
    final class Program {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuilder all = new StringBuilder();
        private final Writer stdin;
        private final Thread reader;

        Program(final Process process) {
            this.process = process;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            this.reader = Thread.ofVirtual().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        synchronized (all) {
                            all.append(line).append('\n');
                        }
                        lines.add(line);
                    }
                } catch (final IOException e) {
                    // the process went away
                }
            });
        }

        /** Waits for a line starting with {@code prefix}. */
        String await(final String prefix, final Duration timeout) throws InterruptedException {
            final long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                final long left = deadline - System.nanoTime();
                final String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
                if (line == null) {
                    return fail("no line starting with '" + prefix + "' within " + timeout + "; output:\n" + output());
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
            }
        }

        void send(final String line) throws IOException {
            stdin.write(line + "\n");
            stdin.flush();
        }

        /** Waits for the exit (bounded) and returns the exit code. */
        int waitFor(final Duration timeout) throws InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                return fail("did not exit within " + timeout + "; output:\n" + output());
            }
            return process.exitValue();
        }

        String output() {
            try {
                if (process.isAlive()) {
                    Thread.sleep(50); // let the reader drain what the process wrote so far
                } else {
                    reader.join(10_000); // the pipe closed: everything the process wrote is read
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (all) {
                return all.toString();
            }
        }
    }

    /** Starts {@code command} with {@link #env()}; stderr goes into the same output. */
    Program start(final List<String> command) throws IOException {
        return start(command, Map.of());
    }

    /** Starts {@code command} with {@link #env()} and {@code extraEnv}. */
    Program start(final List<String> command, final Map<String, String> extraEnv) throws IOException {
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env());
        pb.environment().putAll(extraEnv);
        pb.directory(dir.toFile());
        final Process p = pb.start();
        processes.add(p);
        return new Program(p);
    }

    /**
     * Starts {@code command} once a socket listens on TCP {@code port} (bounded). Reads the kernel's
     * socket tables instead of connecting, because perftest's server accepts exactly one connection.
     */
    Program startWhenListening(final int port, final List<String> command) throws Exception {
        final String hexPort = String.format(":%04X ", port);
        eventually(
                Duration.ofSeconds(20),
                () -> {
                    for (final String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                        try {
                            for (final String line : Files.readAllLines(Path.of(table))) {
                                final String[] f = line.trim().split("\\s+");
                                if (f.length > 3 && (f[1] + " ").endsWith(hexPort) && f[3].equals("0A")) {
                                    return true;
                                }
                            }
                        } catch (final IOException e) {
                            // table absent (no IPv6): try the other one
                        }
                    }
                    return false;
                },
                "a listener on port " + port);
        return start(command);
    }

    /** Runs {@code command} to completion (bounded) and returns its output. */
    Result run(final List<String> command, final Duration timeout) throws Exception {
        return run(command, timeout, Map.of());
    }

    /** Runs {@code command} with {@code extraEnv} to completion (bounded) and returns its output. */
    Result run(final List<String> command, final Duration timeout, final Map<String, String> extraEnv)
            throws Exception {
        final Program p = start(command, extraEnv);
        final int code = p.waitFor(timeout);
        return new Result(code, p.output());
    }

    record Result(int exitCode, String output) {}

    /** Zero-copy regions this JVM (the vNIC) has mapped now: the library's memfds in /proc/self/maps. */
    static long mappedZeroCopyRegions() throws IOException {
        try (var lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.contains("/memfd:vrdma-mr ")).count();
        }
    }

    /** The header the test programs share (device, connection and completion helpers). */
    private static final String SHARED_HEADER = "loopback.h";

    /**
     * Compiles {@code source} (a resource of this test class) against the installed headers and the
     * programs' shared header.
     */
    Path compile(final String resource) throws Exception {
        requireCommand("gcc", "gcc");
        requireFile(Path.of("/usr/include/infiniband/verbs.h"), "Debian package libibverbs-dev");
        final Path src = copyResource(resource);
        if (!Files.exists(dir.resolve(SHARED_HEADER))) {
            copyResource(SHARED_HEADER);
        }
        final Path exe = dir.resolve(resource.replace(".c", ""));
        final Process gcc = new ProcessBuilder(
                        "gcc", "-O1", "-Wall", "-Werror", "-o", exe.toString(), src.toString(), "-libverbs")
                .redirectErrorStream(true)
                .start();
        processes.add(gcc);
        final String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
            return fail("gcc failed:\n" + out);
        }
        return exe;
    }

    private Path copyResource(final String resource) throws IOException {
        final Path to = dir.resolve(resource);
        try (var in = ShimFixture.class.getResourceAsStream(resource)) {
            if (in == null) {
                return fail("missing test resource " + resource);
            }
            Files.copy(in, to);
        }
        return to;
    }

    /** Polls {@code condition} until it holds (bounded). */
    static void eventually(final Duration timeout, final BooleanSupplier condition, final String what)
            throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + timeout + ": " + what);
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() throws Exception {
        for (final Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        try {
            server.close();
            // Every context is closed now; the device gives back its buffers.
            loop.submit(() -> {
                        if (!deviceClosed) {
                            device.close();
                            deviceClosed = true;
                        }
                    })
                    .get(LOOP_WAIT_S, TimeUnit.SECONDS);
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(f -> f.toFile().delete());
            }
        }
    }
}
