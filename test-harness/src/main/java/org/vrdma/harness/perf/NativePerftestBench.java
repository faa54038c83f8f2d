package org.vrdma.harness.perf;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.vrdma.shim.MemoryStats;
import org.vrdma.shim.VnicControlServer;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;

/**
 * Debian's unmodified {@code ib_write_bw} and {@code ib_send_lat} over the emulator, as a benchmark:
 * two hosts in this process (each a vSwitch on a real UDP socket on 127.0.0.1 and a vNIC serving the
 * native {@code libibverbs.so.1}), the two perftest processes on top, their own reports parsed.
 */
public final class NativePerftestBench implements AutoCloseable {
    /**
     * One {@code ib_write_bw} run: perftest's own average bandwidth (Gbit/s), the CPU it cost per
     * WRITE, and how the vNICs reached registered memory.
     */
    public record WriteRun(double gbps, long writes, WriteCpu cpu, MemoryStats memory, String output) {}

    /**
     * perftest's {@code ib_send_lat} figures: one-way latency, typical and 99th percentile (µs), and
     * the doorbells rung per round trip.
     */
    public record SendLat(double typicalUs, double p99Us, double doorbellsPerRoundTrip, String output) {}

    /**
     * CPU time per {@code ib_write_bw} WRITE (µs, user+system) over one run.
     *
     * @param loopsUs both hosts' event-loop threads (vSwitch + vNIC: transport, rings, memory copies)
     * @param vnicProcessUs this whole process: the loops plus control connections, doorbells, JIT and GC
     * @param perftestUs the two perftest processes (posting and polling), without the fixed cost of
     *     starting a run ({@link #perftestFixedCpuNs()}), which does not depend on the WRITEs
     * @param doorbellsPerWrite doorbells the applications rang (each a system call and a wake-up)
     * @param futexWakesPerWrite {@code FUTEX_WAKE} calls of the vNICs for an application asleep on a
     *     completion ring (each a system call on an event loop and a wake-up)
     * @param underlay both hosts' underlay per WRITE, in the order of {@code
     *     NettyUnderlay.dataPathCounters()} (datagrams sent, GSO sends, flushes, datagrams received,
     *     read bursts, {@code recvmmsg} calls, datagrams sent with their payload from the memory
     *     region, {@code sendmmsg} calls)
     * @param acksPerWrite ACKs both transports sent per WRITE
     * @param retransmitted packets both transports sent again over the run
     * @param timeouts retransmission timeouts of both transports over the run
     * @param loopAllocatedBytes heap bytes both event loops allocated per WRITE
     * @param threadsUs this process's CPU per WRITE by kind of thread ({@link ThreadCpu})
     * @param runNs wall time of the run, from starting the server to the client's exit
     * @param loopBusy each host's event-loop CPU over the WRITEs' own time (bytes over perftest's
     *     bandwidth), A the WRITEs' responder (perftest's server), B the requester: near 1, a loop
     *     that had a core to itself throughout; low, a loop that waited (for the application or
     *     for its core)
     */
    public record WriteCpu(
            double loopsUs,
            double vnicProcessUs,
            double perftestUs,
            double doorbellsPerWrite,
            double futexWakesPerWrite,
            double[] underlay,
            double acksPerWrite,
            long retransmitted,
            long timeouts,
            double loopAllocatedBytes,
            double[] threadsUs,
            long runNs,
            double[] loopBusy) {}

    private final Path nativeDir;
    private final Path dir;
    private final RealTimeHost hostA;
    private final RealTimeHost hostB;
    private final VnicControlServer serverA;
    private final VnicControlServer serverB;

    /** WRITEs of the runs that measure perftest's fixed cost of a run (start-up, connection, report). */
    private static final int FIXED_COST_WRITES = 16;

    private long perftestFixedCpuNs;

    private NativePerftestBench(Path nativeDir, long spinNs) throws Exception {
        this.nativeDir = nativeDir;
        this.dir = Files.createTempDirectory("vrdma-bench-native");
        int portA = freeUdpPort();
        int portB = freeUdpPort();
        // The transport of ./vrdma host --verbs-socket: the Java path's real-time profile (window, ACK
        // coalescing, RTO floor), so the two paths differ only in how the application reaches the
        // vNIC, with a longer initial RTO for first transfers that meet hosts still compiling code.
        TransportConfig transport = RealTimeProfile.verbsHostTransport();
        hostA = new RealTimeHost(
                new RealTimeHost.Spec(
                        "vrdma0",
                        "127.0.0.1:" + portA,
                        "10.9.0.1",
                        RealTimeHost.derivedMac(0x0A090001),
                        100,
                        "10.9.0.2",
                        "127.0.0.1:" + portB,
                        transport,
                        4096),
                spinNs);
        RealTimeHost b = null;
        VnicControlServer sa = null;
        try {
            b = new RealTimeHost(
                    new RealTimeHost.Spec(
                            "vrdma0",
                            "127.0.0.1:" + portB,
                            "10.9.0.2",
                            RealTimeHost.derivedMac(0x0A090002),
                            100,
                            "10.9.0.1",
                            "127.0.0.1:" + portA,
                            transport,
                            4096),
                    spinNs);
            sa = VnicControlServer.start(dir.resolve("a.sock"), hostA.endpoint().device(), hostA.executor());
            serverB =
                    VnicControlServer.start(dir.resolve("b.sock"), b.endpoint().device(), b.executor());
        } catch (Exception | Error e) {
            if (sa != null) {
                sa.close();
            }
            if (b != null) {
                b.close();
            }
            hostA.close();
            throw e;
        }
        hostB = b;
        serverA = sa;
    }

    /**
     * The library next to this build ({@code guest-driver-shim/target/native}), or null with the
     * reason in {@code why} when it, or perftest, is missing.
     */
    public static Path nativeLibrary(StringBuilder why) {
        Path root;
        try {
            Path code = Path.of(NativePerftestBench.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            // test-harness/target/test-harness.jar or test-harness/target/classes
            root = code.getParent().getParent().getParent();
        } catch (Exception e) {
            root = Path.of(".");
        }
        Path lib = root.resolve("guest-driver-shim/target/native");
        if (!Files.exists(lib.resolve("libibverbs.so.1"))) {
            why.append(lib)
                    .append("/libibverbs.so.1 is missing (needs gcc and libibverbs-dev; ./test.sh installs them)");
            return null;
        }
        for (String command : List.of("ib_write_bw", "ib_send_lat")) {
            boolean found = false;
            for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
                found |= !p.isEmpty() && Files.isExecutable(Path.of(p, command));
            }
            if (!found) {
                why.append(command).append(" is missing (Debian package perftest; ./test.sh installs it)");
                return null;
            }
        }
        return lib;
    }

    /**
     * Brings up the two hosts.
     *
     * @param spinNs how long each host's event loop polls after its last event before it sleeps, as
     *     {@code ./vrdma host --busy-poll-us} and the Java path's lab (0: it sleeps at once)
     */
    public static NativePerftestBench start(Path nativeDir, long spinNs) throws Exception {
        return new NativePerftestBench(nativeDir, spinNs);
    }

    /**
     * An unreported {@code ib_write_bw} run of {@code writes}: the vNIC's ring, memory and control
     * code is compiled by the JIT during such runs, as the Java path and kernel TCP get a warm-up.
     * Returns the bandwidth perftest reported (Gbit/s), 0 if none.
     */
    public double warmUp(int sizeBytes, int writes) throws Exception {
        return reportedGbps(pair(writeCommand(sizeBytes, writes), 300), sizeBytes);
    }

    /** The average bandwidth {@code ib_write_bw} reported (Gbit/s with {@code --report_gbits}), 0 if none. */
    private static double reportedGbps(String output, int sizeBytes) {
        Matcher bw = Pattern.compile("(?m)^\\s*" + sizeBytes + "\\s+\\d+\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)")
                .matcher(output);
        return bw.find() ? Double.parseDouble(bw.group(2)) : 0;
    }

    /**
     * Two runs of a few WRITEs whose perftest CPU (the smaller) is the fixed cost of a run: perftest
     * spends about 0.2 s of CPU before its first WRITE measuring the clock rate in a loop of {@code
     * gettimeofday} calls, which no figure per WRITE should carry.
     */
    public void measureFixedCost(int sizeBytes) throws Exception {
        long fixed = Long.MAX_VALUE;
        for (int i = 0; i < 2; i++) {
            long c0 = childrenCpuNs();
            pair(writeCommand(sizeBytes, FIXED_COST_WRITES), 300);
            fixed = Math.min(fixed, childrenCpuNs() - c0);
        }
        perftestFixedCpuNs = fixed;
    }

    /** The two perftest processes' CPU for a run of next to no WRITEs, measured by {@link #measureFixedCost}. */
    public long perftestFixedCpuNs() {
        return perftestFixedCpuNs;
    }

    /** {@code ib_write_bw -s sizeBytes -n writes} (an iteration count rather than {@code -D}, whose margins swallow short runs). */
    public WriteRun write(int sizeBytes, int writes) throws Exception {
        MemoryStats memory0 = memoryStats();
        long loops0 = loopCpuNs();
        long alloc0 = loopAllocatedBytes();
        long process0 = processCpuNs();
        long children0 = childrenCpuNs();
        long doorbells0 = serverA.doorbells() + serverB.doorbells();
        long futex0 = serverA.futexWakes() + serverB.futexWakes();
        long[] u0 = underlayCounters();
        TransportCounters t0 = transportCounters();
        long[] threads0 = ThreadCpu.byKind();
        long loopA0 = loopCpuNs(hostA);
        long loopB0 = loopCpuNs(hostB);
        long wall0 = System.nanoTime();
        String write = pair(writeCommand(sizeBytes, writes), 300);
        long runNs = System.nanoTime() - wall0;
        long loopANs = loopCpuNs(hostA) - loopA0;
        long loopBNs = loopCpuNs(hostB) - loopB0;
        double n = writes;
        long[] threads1 = ThreadCpu.byKind();
        double[] threads = new double[threads0.length];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = (threads1[i] - threads0[i]) / n / 1e3;
        }
        long[] u1 = underlayCounters();
        TransportCounters t1 = transportCounters();
        double[] underlay = new double[u0.length];
        for (int i = 0; i < u0.length; i++) {
            underlay[i] = (u1[i] - u0[i]) / n;
        }
        WriteCpu cpu = new WriteCpu(
                (loopCpuNs() - loops0) / n / 1e3,
                (processCpuNs() - process0) / n / 1e3,
                Math.max(0, childrenCpuNs() - children0 - perftestFixedCpuNs) / n / 1e3,
                (serverA.doorbells() + serverB.doorbells() - doorbells0) / n,
                (serverA.futexWakes() + serverB.futexWakes() - futex0) / n,
                underlay,
                (t1.txAcks - t0.txAcks) / n,
                t1.retransmittedPackets - t0.retransmittedPackets,
                t1.timeouts - t0.timeouts,
                (loopAllocatedBytes() - alloc0) / n,
                threads,
                runNs,
                new double[2]);
        MemoryStats memory1 = memoryStats();
        MemoryStats memory = new MemoryStats(
                memory1.zeroCopyRegions() - memory0.zeroCopyRegions(),
                memory1.copyRegions() - memory0.copyRegions(),
                memory1.refusedMemfds() - memory0.refusedMemfds(),
                memory1.copyCalls() - memory0.copyCalls(),
                memory1.copyBytes() - memory0.copyBytes());
        double gbps = reportedGbps(write, sizeBytes);
        if (gbps <= 0) {
            throw new IllegalStateException("ib_write_bw did not report:\n" + write);
        }
        double transferNs = n * sizeBytes * 8 / gbps;
        cpu.loopBusy()[0] = loopANs / transferNs;
        cpu.loopBusy()[1] = loopBNs / transferNs;
        return new WriteRun(gbps, writes, cpu, memory, write);
    }

    /** {@code ib_send_lat -s latencyBytes -n iterations}. */
    public SendLat sendLat(int latencyBytes, int iterations) throws Exception {
        long doorbells0 = serverA.doorbells() + serverB.doorbells();
        String lat = pair(List.of("ib_send_lat", "-d", "vrdma0", "-s", "" + latencyBytes, "-n", "" + iterations), 180);
        double doorbells = (serverA.doorbells() + serverB.doorbells() - doorbells0) / (double) iterations;
        Matcher l = Pattern.compile("(?m)^\\s*" + latencyBytes + "\\s+" + iterations
                        + "\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+(\\S+)\\s+([0-9.]+)")
                .matcher(lat);
        if (!l.find()) {
            throw new IllegalStateException("ib_send_lat did not report:\n" + lat);
        }
        return new SendLat(Double.parseDouble(l.group(3)), Double.parseDouble(l.group(6)), doorbells, lat);
    }

    /**
     * -N: no peak bandwidth. Up to 20,000 iterations perftest computes it after the run with a loop
     * over pairs of iterations, about 0.5 s of CPU at 20,000; the bench reports the average.
     */
    private static List<String> writeCommand(int sizeBytes, int writes) {
        return List.of("ib_write_bw", "-d", "vrdma0", "-s", "" + sizeBytes, "-n", "" + writes, "--report_gbits", "-N");
    }

    /** Both vNICs' memory counters added up. */
    private MemoryStats memoryStats() {
        MemoryStats a = serverA.memoryStats();
        MemoryStats b = serverB.memoryStats();
        return new MemoryStats(
                a.zeroCopyRegions() + b.zeroCopyRegions(),
                a.copyRegions() + b.copyRegions(),
                a.refusedMemfds() + b.refusedMemfds(),
                a.copyCalls() + b.copyCalls(),
                a.copyBytes() + b.copyBytes());
    }

    /** Both hosts' underlay counters added up. */
    private long[] underlayCounters() {
        long[] a = hostA.underlayCounters();
        long[] b = hostB.underlayCounters();
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
        return a;
    }

    /** Both hosts' transport counters added up. */
    private TransportCounters transportCounters() {
        TransportCounters c = hostA.transportCounters();
        TransportCounters b = hostB.transportCounters();
        c.txAcks += b.txAcks;
        c.retransmittedPackets += b.retransmittedPackets;
        c.timeouts += b.timeouts;
        return c;
    }

    /** Heap bytes both hosts' event-loop threads allocated, 0 where unsupported. */
    private long loopAllocatedBytes() {
        Supplier<Long> own = () -> ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                ? Math.max(0, t.getCurrentThreadAllocatedBytes())
                : 0L;
        return hostA.call(own) + hostB.call(own);
    }

    /** CPU time of both hosts' event-loop threads. */
    private long loopCpuNs() {
        return loopCpuNs(hostA) + loopCpuNs(hostB);
    }

    /** CPU time of one host's event-loop thread. */
    private static long loopCpuNs(RealTimeHost host) {
        return host.call(() -> Math.max(0, ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime()));
    }

    /** CPU time of this process, all threads. */
    private static long processCpuNs() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? Math.max(0, os.getProcessCpuTime())
                : 0;
    }

    /**
     * CPU time of this process's children that exited and were reaped (cutime + cstime of {@code
     * /proc/self/stat}, in clock ticks of 10 ms).
     */
    private static long childrenCpuNs() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // Fields after the command name start at field 3 (state): cutime is 16, cstime 17.
            return (Long.parseLong(f[16 - 3]) + Long.parseLong(f[17 - 3])) * 10_000_000L;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Server on host A, client on host B (once the server listens); returns the client's output. */
    private String pair(List<String> command, long timeoutS) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        List<String> serverCmd = new ArrayList<>(command);
        serverCmd.addAll(List.of("-p", "" + port));
        List<String> clientCmd = new ArrayList<>(serverCmd);
        clientCmd.add("127.0.0.1");
        Path serverOut = dir.resolve("server.out");
        Path clientOut = dir.resolve("client.out");
        Process server = start(serverCmd, serverA, serverOut);
        Process client = null;
        try {
            awaitListening(server, port);
            client = start(clientCmd, serverB, clientOut);
            if (!client.waitFor(timeoutS, TimeUnit.SECONDS) || !server.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(command.get(0) + " did not finish in " + timeoutS + " s");
            }
            String out = Files.readString(clientOut, StandardCharsets.UTF_8);
            if (client.exitValue() != 0 || server.exitValue() != 0) {
                throw new IllegalStateException(command.get(0) + " failed:\n" + out + "\nserver:\n"
                        + Files.readString(serverOut, StandardCharsets.UTF_8));
            }
            return out;
        } finally {
            server.destroyForcibly();
            if (client != null) {
                client.destroyForcibly();
            }
        }
    }

    private Process start(List<String> command, VnicControlServer server, Path out) throws IOException {
        ProcessBuilder pb =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("LD_LIBRARY_PATH", nativeDir.toString());
        pb.environment().put("VRDMA_SOCKET", server.socketPath().toString());
        return pb.start();
    }

    private static void awaitListening(Process server, int port) throws Exception {
        String hexPort = String.format(Locale.ROOT, ":%04X ", port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && server.isAlive()) {
            for (String line : Files.readAllLines(Path.of("/proc/net/tcp"))) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && (f[1] + " ").endsWith(hexPort) && f[3].equals("0A")) {
                    return;
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("perftest's server did not listen on port " + port);
    }

    private static int freeUdpPort() throws IOException {
        try (DatagramSocket s = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws IOException {
        try {
            serverA.close();
            serverB.close();
        } finally {
            try {
                hostA.close();
            } finally {
                hostB.close();
                try (var files = Files.list(dir)) {
                    for (Path f : files.toList()) {
                        Files.deleteIfExists(f);
                    }
                }
                Files.deleteIfExists(dir);
            }
        }
    }
}
