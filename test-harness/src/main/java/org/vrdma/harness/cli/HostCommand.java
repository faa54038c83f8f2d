package org.vrdma.harness.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.vrdma.control.cli.Resources;
import org.vrdma.harness.perf.OobLine;
import org.vrdma.harness.perf.OobLine.OobException;
import org.vrdma.harness.perf.RealTimeHost;
import org.vrdma.harness.perf.RealTimeProfile;
import org.vrdma.harness.perf.RemotePerftest;
import org.vrdma.harness.perf.RemotePerftest.Request;
import org.vrdma.harness.perf.RemotePerftest.Result;
import org.vrdma.harness.perf.RemotePerftest.Test;
import org.vrdma.harness.perf.RemotePerftest.TestFailure;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./vrdma host}: one host per process. Without a subcommand it runs a host — a vSwitch bound
 * to a real UDP underlay address, one vRDMA ENI with a vNIC, a route to one peer ENI — as a
 * perftest server or client; the peer is another process, in another terminal or another network
 * namespace. The control plane's {@code host create|list|get|delete} subcommands stay under the
 * same name.
 *
 * <p>Exit codes: 0 success, 2 bad arguments, 1 the host could not start (e.g. the underlay address
 * cannot be bound), 3 the peer was unreachable or the out-of-band exchange failed, 4 the RDMA test
 * failed (error completion, or no progress within {@code --test-timeout}), 5 the data did not
 * arrive intact.
 */
@Command(
        name = "host",
        mixinStandardHelpOptions = true,
        description = {
            "Run one host (vSwitch + vRDMA ENI + vNIC) in this process as a perftest server or client,"
                    + " talking to a peer host in another process over a real UDP underlay.",
            "Subcommands create|list|get|delete manage hosts in the control plane instead."
        },
        footer = {
            "",
            "Two terminals on one machine:",
            "  ./vrdma host --server --underlay 127.0.0.1:7001 --eni-ip 10.0.0.1"
                    + " --peer-eni-ip 10.0.0.2 --peer-underlay 127.0.0.1:7002",
            "  ./vrdma host --client --underlay 127.0.0.1:7002 --eni-ip 10.0.0.2"
                    + " --peer-eni-ip 10.0.0.1 --peer-underlay 127.0.0.1:7001 --test write_bw --verify",
            "",
            "Exit codes: 0 ok, 1 host did not start, 2 bad arguments, 3 peer unreachable or out-of-band"
                    + " exchange failed, 4 RDMA test failed or timed out, 5 data not intact."
        })
public final class HostCommand extends Resources.HostCommand implements Callable<Integer> {
    static final int START_FAILED = 1;
    static final int PEER_UNREACHABLE = 3;
    static final int TEST_FAILED = 4;
    static final int DATA_CORRUPT = 5;

    @Spec
    CommandSpec spec;

    @Option(names = "--server", description = "Wait for a client and serve its test.")
    boolean server;

    @Option(names = "--client", description = "Run a test against the server.")
    boolean client;

    @Option(names = "--underlay", paramLabel = "IP:PORT", description = "UDP address this host's vSwitch binds.")
    String underlay;

    @Option(names = "--eni-ip", paramLabel = "IP", description = "This host's ENI (vNIC) address in the VPC.")
    String eniIp;

    @Option(
            names = "--eni-mac",
            paramLabel = "MAC",
            description = "The ENI's MAC (aa:bb:cc:dd:ee:ff); default 02:00 followed by the ENI address.")
    String eniMac;

    @Option(names = "--vni", defaultValue = "100", description = "The VPC's VNI (default ${DEFAULT-VALUE}).")
    int vni;

    @Option(names = "--peer-eni-ip", paramLabel = "IP", description = "The peer host's ENI address.")
    String peerEniIp;

    @Option(names = "--peer-underlay", paramLabel = "IP:PORT", description = "The peer vSwitch's UDP address.")
    String peerUnderlay;

    @Option(
            names = "--oob-port",
            defaultValue = "18515",
            description =
                    "TCP port of the out-of-band exchange on the server's underlay IP (default ${DEFAULT-VALUE}).")
    int oobPort;

    @Option(
            names = "--test",
            defaultValue = "write_bw",
            description = "write_bw, read_bw or send_lat (default ${DEFAULT-VALUE}).")
    String test;

    @Option(
            names = "--size",
            defaultValue = "65536",
            description = "Message size in bytes, K/M suffixes allowed (default ${DEFAULT-VALUE}).")
    String size;

    @Option(
            names = "--iterations",
            defaultValue = "5000",
            description = "Messages (bandwidth) or round trips (latency) (default ${DEFAULT-VALUE}).")
    long iterations;

    @Option(
            names = "--loss",
            defaultValue = "0",
            description = "Random loss injected on this host's uplink, data and control packets, 0..1.")
    double loss;

    @Option(
            names = "--verify",
            description = "Check every byte: the test runs in rounds of --buffer bytes, each checked by the receiver.")
    boolean verify;

    @Option(names = "--forever", description = "Server: serve clients one after another until killed.")
    boolean forever;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the verified data pattern.")
    long seed;

    @Option(names = "--tx-depth", defaultValue = "64", description = "Outstanding messages (default ${DEFAULT-VALUE}).")
    int txDepth;

    @Option(names = "--mtu", defaultValue = "4096", description = "Path MTU: 256..4096 (default ${DEFAULT-VALUE}).")
    int mtu;

    @Option(names = "--recovery", defaultValue = "sr", description = "sr (selective repeat) or gbn (go-back-N).")
    String recovery;

    @Option(
            names = "--buffer",
            defaultValue = "64M",
            description = "Registered buffer, and the bytes one verified round covers (default ${DEFAULT-VALUE}).")
    String buffer;

    @Option(
            names = "--connect-timeout",
            defaultValue = "30",
            description = "Seconds the client keeps trying to reach the server, and the server waits for a"
                    + " client (0: forever) (default ${DEFAULT-VALUE}).")
    int connectTimeoutS;

    @Option(
            names = "--test-timeout",
            defaultValue = "600",
            description = "Seconds one test may take before it fails (default ${DEFAULT-VALUE}).")
    int testTimeoutS;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Request request = validate();
        long mac = eniMac == null ? RealTimeHost.derivedMac(UnderlayAddress.parseIpv4(eniIp)) : parseMac(eniMac);
        // Real sockets: the RTT includes two event loops and the kernel (see RealTimeProfile).
        TransportConfig transport = RealTimeProfile.transport();
        RealTimeHost host;
        try {
            host = new RealTimeHost(new RealTimeHost.Spec(
                    server ? "server" : "client", underlay, eniIp, mac, vni, peerEniIp, peerUnderlay, transport, (int)
                            parseBytes("--buffer", buffer)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return START_FAILED;
        } catch (RuntimeException e) {
            err.println("vrdma host: cannot start the host on " + underlay + ": " + rootMessage(e));
            return START_FAILED;
        }
        try {
            if (loss > 0) {
                FaultConfig faults = FaultConfig.randomLoss(loss);
                host.faults(faults, faults);
            }
            out.println("vrdma host: " + (server ? "server" : "client") + ", ENI " + eniIp + " (VNI " + vni + ") on "
                    + host.describe() + ", peer ENI " + peerEniIp + " via " + peerUnderlay
                    + (loss > 0 ? String.format(Locale.ROOT, ", %.2f%% loss on the uplink", loss * 100) : ""));
            out.flush();
            return server ? runServer(host, out, err) : runClient(host, request, out, err);
        } finally {
            host.close();
        }
    }

    private Request validate() {
        if (server == client) {
            throw usage("say --server or --client (or use a subcommand: create, list, get, delete)");
        }
        require("--underlay", underlay);
        require("--eni-ip", eniIp);
        require("--peer-eni-ip", peerEniIp);
        require("--peer-underlay", peerUnderlay);
        try {
            UnderlayAddress.parse(underlay);
            UnderlayAddress.parse(peerUnderlay);
            UnderlayAddress.parseIpv4(eniIp);
            UnderlayAddress.parseIpv4(peerEniIp);
        } catch (RuntimeException e) {
            throw usage("bad address: " + e.getMessage());
        }
        if (eniMac != null) {
            parseMac(eniMac);
        }
        if (!(loss >= 0 && loss < 1)) {
            throw usage("--loss must be in [0, 1)");
        }
        if (oobPort <= 0 || oobPort > 0xFFFF) {
            throw usage("--oob-port must be 1..65535");
        }
        if (vni <= 0 || vni >= 1 << 24) {
            throw usage("--vni must be 1..16777215");
        }
        if (connectTimeoutS < 0 || testTimeoutS <= 0) {
            throw usage("--connect-timeout must be >= 0 and --test-timeout > 0");
        }
        if (forever && client) {
            throw usage("--forever is for the server");
        }
        Test t;
        try {
            t = Test.of(test);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        long sizeBytes = parseBytes("--size", size);
        long bufferBytes = parseBytes("--buffer", buffer);
        if (sizeBytes < 1 || sizeBytes > bufferBytes || bufferBytes > (1 << 30)) {
            throw usage("--size must be 1..--buffer, and --buffer at most 1G");
        }
        if (t == Test.SEND_LAT && 2 * sizeBytes > bufferBytes) {
            throw usage("send_lat needs --buffer of at least twice --size");
        }
        if (iterations < 1) {
            throw usage("--iterations must be positive");
        }
        if (txDepth < 1 || txDepth > 4096) {
            throw usage("--tx-depth must be 1..4096");
        }
        Mtu pathMtu = null;
        for (Mtu m : Mtu.values()) {
            if (m.bytes() == mtu) {
                pathMtu = m;
            }
        }
        if (pathMtu == null) {
            throw usage("--mtu must be 256, 512, 1024, 2048 or 4096");
        }
        RecoveryMode mode = switch (recovery) {
            case "sr" -> RecoveryMode.SELECTIVE_REPEAT;
            case "gbn" -> RecoveryMode.GO_BACK_N;
            default -> throw usage("--recovery must be sr or gbn, not " + recovery);
        };
        long slots = bufferBytes / sizeBytes;
        long window = Math.min(slots, iterations) * sizeBytes;
        return new Request(t, (int) sizeBytes, iterations, window, verify, seed, txDepth, pathMtu, mode);
    }

    private int runServer(RealTimeHost host, PrintWriter out, PrintWriter err) {
        String ip = UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(host.underlayAddress()));
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(InetAddress.getByName(ip), oobPort));
            listener.setSoTimeout(connectTimeoutS * 1000);
            do {
                out.println(" waiting for a client on " + ip + ":" + oobPort + " (out of band, TCP)");
                out.flush();
                Socket socket;
                try {
                    socket = listener.accept();
                } catch (SocketTimeoutException e) {
                    err.println("vrdma host: no client connected within " + connectTimeoutS + " s");
                    return PEER_UNREACHABLE;
                }
                try (OobLine.Channel channel = new OobLine.Channel(socket)) {
                    RemotePerftest.serve(host, channel, testTimeoutS * 1_000_000_000L, out);
                } catch (OobException e) {
                    err.println("vrdma host: out-of-band exchange with " + socket.getRemoteSocketAddress() + " failed: "
                            + e.getMessage());
                    if (!forever) {
                        return PEER_UNREACHABLE;
                    }
                } catch (TestFailure e) {
                    err.println("vrdma host: " + e.getMessage());
                    if (!forever) {
                        return e.getMessage().contains("intact") ? DATA_CORRUPT : TEST_FAILED;
                    }
                }
            } while (forever);
            return 0;
        } catch (BindException e) {
            err.println("vrdma host: cannot listen on " + ip + ":" + oobPort + ": " + e.getMessage());
            return START_FAILED;
        } catch (IOException e) {
            err.println("vrdma host: out-of-band listener failed: " + e.getMessage());
            return PEER_UNREACHABLE;
        }
    }

    private int runClient(RealTimeHost host, Request request, PrintWriter out, PrintWriter err) {
        String ip = UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(UnderlayAddress.parse(peerUnderlay)));
        Socket socket = connect(ip, err);
        if (socket == null) {
            return PEER_UNREACHABLE;
        }
        try (OobLine.Channel channel = new OobLine.Channel(socket)) {
            Result result = RemotePerftest.runClient(host, channel, request, testTimeoutS * 1_000_000_000L, out);
            if (result.mismatchOffset() >= 0) {
                err.println("vrdma host: data not intact: first wrong byte at " + result.mismatchOffset());
                return DATA_CORRUPT;
            }
            return 0;
        } catch (IOException | OobException e) {
            err.println("vrdma host: out-of-band exchange with the server at " + ip + ":" + oobPort + " failed: "
                    + e.getMessage());
            return PEER_UNREACHABLE;
        } catch (TestFailure e) {
            err.println("vrdma host: " + e.getMessage());
            return TEST_FAILED;
        }
    }

    /** Connects to the server's out-of-band port, retrying until --connect-timeout passes. */
    private Socket connect(String ip, PrintWriter err) {
        long deadline = System.nanoTime() + Math.max(1, connectTimeoutS) * 1_000_000_000L;
        String last = "";
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(ip, oobPort), 1000);
                return s;
            } catch (IOException e) {
                last = e.getMessage();
                try {
                    s.close();
                } catch (IOException ignored) {
                    // not connected
                }
            }
            if (System.nanoTime() - deadline > 0) {
                err.println("vrdma host: cannot reach the server's out-of-band port " + ip + ":" + oobPort + " within "
                        + Math.max(1, connectTimeoutS) + " s (" + last + ")");
                return null;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    private void require(String name, String value) {
        if (value == null) {
            throw usage(name + " is required to run a host");
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private long parseBytes(String option, String text) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        long multiplier = 1;
        if (s.endsWith("K") || s.endsWith("M") || s.endsWith("G")) {
            multiplier = switch (s.charAt(s.length() - 1)) {
                case 'K' -> 1L << 10;
                case 'M' -> 1L << 20;
                default -> 1L << 30;
            };
            s = s.substring(0, s.length() - 1);
        }
        try {
            return Math.multiplyExact(Long.parseLong(s), multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw usage(option + ": not a byte count (try 65536, 64K, 1M): " + text);
        }
    }

    private long parseMac(String text) {
        String[] parts = text.split(":");
        if (parts.length != 6) {
            throw usage("--eni-mac must look like 02:00:0a:00:00:01: " + text);
        }
        long mac = 0;
        for (String p : parts) {
            try {
                int b = Integer.parseInt(p, 16);
                if (p.length() != 2 || b < 0) {
                    throw new NumberFormatException();
                }
                mac = (mac << 8) | b;
            } catch (NumberFormatException e) {
                throw usage("--eni-mac must look like 02:00:0a:00:00:01: " + text);
            }
        }
        return mac;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }
}
