package org.vrdma.harness.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.vrdma.control.cli.Resources;
import org.vrdma.harness.lab.LinkEgress;
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
import org.vrdma.shim.VnicControlServer;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.qos.QosConfig;
import org.vrdma.vswitch.tap.TapConfig;
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

    @Option(
            names = "--verbs-socket",
            paramLabel = "PATH",
            description = "Instead of a test: serve unmodified C verbs programs (the native libibverbs.so.1 of"
                    + " guest-driver-shim, VRDMA_SOCKET=PATH) on this host's vNIC until killed.")
    String verbsSocket;

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
            names = "--host-link",
            paramLabel = "JSON",
            description = "Emulate this host's link to its switch on the vSwitch uplink, given as a lab file's"
                    + " link: {\"rateGbps\": 10, \"delayNs\": 5000, \"bufferBytes\": 1048576, \"ecn\": {...},"
                    + " \"faults\": {\"loss\": 0.01}, \"controlFaults\": {...}}; fields left out take the lab"
                    + " defaults (100 Gbit/s, 1 us, 1 MiB, no ECN, no faults).")
    String hostLink;

    @Option(
            names = "--link-seed",
            defaultValue = "1",
            description = "Seed of the uplink's RED marking and faults, mixed with the ENI address so that"
                    + " hosts of one lab draw apart (default ${DEFAULT-VALUE}).")
    long linkSeed;

    /** {@link #hostLink} as the uplink's config, once validated; null without it. */
    private EgressConfig hostLinkEgress;

    @Option(
            names = "--tap",
            arity = "0..1",
            fallbackValue = "",
            paramLabel = "NAME",
            description = "Back the ENI with a TAP device too (default name vrdma<last ENI byte>), holding the"
                    + " ENI's MAC and address: the kernel's TCP/IP (ping, iperf3) crosses the VPC on it.")
    String tap;

    @Option(
            names = "--tap-prefix",
            defaultValue = "24",
            description = "Prefix length of the ENI address on the TAP (default ${DEFAULT-VALUE}).")
    int tapPrefix;

    @Option(names = "--tap-mtu", defaultValue = "1500", description = "TAP MTU (default ${DEFAULT-VALUE}).")
    int tapMtu;

    @Option(
            names = "--tap-netns",
            paramLabel = "NS",
            description = "Move the TAP into this network namespace (a guest's) and configure it there.")
    String tapNetns;

    @Option(
            names = "--tap-eni",
            paramLabel = "vni=V,ip=IP,peer=IP,tap=NAME[,netns=NS]",
            description = "An extra TAP-only ENI in VPC V with a route to the peer address behind --peer-underlay"
                    + " (repeatable).")
    java.util.List<String> tapEnis = new java.util.ArrayList<>();

    @Option(
            names = "--oob-via-eni",
            description = "Run the out-of-band TCP exchange across the VPC, between the ENI addresses (needs --tap"
                    + " without --tap-netns on both hosts), instead of between the underlay addresses.")
    boolean oobViaEni;

    @Option(
            names = "--eni-rate",
            paramLabel = "BPS",
            description = "Shape what the ENI sends to this rate (e.g. 300M, 1G), RDMA and TCP/IP classes sharing it"
                    + " by --qos-weights.")
    String eniRate;

    @Option(
            names = "--qos-weights",
            defaultValue = "1:1",
            paramLabel = "RDMA:TCP",
            description = "Weights of the RDMA and TCP/IP classes under --eni-rate (default ${DEFAULT-VALUE}).")
    String qosWeights;

    @Option(
            names = "--eni-loss",
            defaultValue = "0",
            description = "Random loss on the ENI's delivery port (toward the vNIC and TAP), 0..1.")
    double eniLoss;

    @Option(
            names = "--stats-interval",
            defaultValue = "0",
            paramLabel = "MS",
            description = "Print the switch's counters as one JSON line ('stats {...}') every MS milliseconds.")
    int statsIntervalMs;

    @Option(
            names = "--capture",
            paramLabel = "FILE",
            description = "Write a pcap of the switch's underlay (Geneve) and inner (RoCEv2) frames to FILE until the"
                    + " host stops; tshark and Wireshark decode it.")
    Path capture;

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
            names = "--busy-poll-us",
            defaultValue = "100",
            description = "Microseconds each host's event loop keeps polling its socket after its last event before it"
                    + " sleeps, as RDMA applications poll their CQs; a loop that loses its core while polling sleeps"
                    + " instead for a while (0: sleep at once); default ${DEFAULT-VALUE}.")
    long busyPollUs;

    @Option(
            names = "--test-timeout",
            defaultValue = "600",
            description = "Seconds one test may take before it fails (default ${DEFAULT-VALUE}).")
    int testTimeoutS;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Request request = verbsSocket != null ? validateVerbsHost() : validate();
        if (busyPollUs < 0 || busyPollUs > 1_000_000) {
            throw new ParameterException(spec.commandLine(), "--busy-poll-us must be 0..1000000");
        }
        long mac = eniMac == null ? RealTimeHost.derivedMac(UnderlayAddress.parseIpv4(eniIp)) : parseMac(eniMac);
        // Real sockets: the RTT includes two event loops and the kernel (see RealTimeProfile).
        // Applications set retry_cnt 7 and timeout 14 expecting ~0.5 s before RETRY_EXC_ERR, as on
        // hardware with a fixed timeout; for them the adaptive RTO starts at 50 ms (and never goes
        // below the profile's 5 ms), so a peer still moving its QP to RTR, or a host descheduled under
        // load, is waited for.
        TransportConfig transport =
                verbsSocket != null ? RealTimeProfile.verbsHostTransport() : RealTimeProfile.transport();
        RealTimeHost host;
        try {
            host = new RealTimeHost(
                    new RealTimeHost.Spec(
                            verbsSocket != null ? "vrdma0" : server ? "server" : "client",
                            underlay,
                            eniIp,
                            mac,
                            vni,
                            peerEniIp,
                            peerUnderlay,
                            transport,
                            verbsSocket != null ? 4096 : (int) parseBytes("--buffer", buffer)),
                    busyPollUs * 1000,
                    LinkEgress.switchSeed(linkSeed, UnderlayAddress.parseIpv4(eniIp)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return START_FAILED;
        } catch (RuntimeException e) {
            err.println("vrdma host: cannot start the host on " + underlay + ": " + rootMessage(e));
            return START_FAILED;
        }
        java.util.concurrent.ScheduledExecutorService stats = null;
        Thread captureHook = null;
        try {
            if (loss > 0) {
                FaultConfig faults = FaultConfig.randomLoss(loss);
                host.faults(faults, faults);
            }
            if (hostLinkEgress != null) {
                host.uplink(hostLinkEgress);
                out.println(" host link on the uplink: " + describe(hostLinkEgress) + ", seed " + linkSeed);
            }
            try {
                configureEni(host, mac, out);
            } catch (IOException | RuntimeException e) {
                err.println("vrdma host: cannot set up the ENI: " + rootMessage(e));
                return START_FAILED;
            }
            if (capture != null) {
                try {
                    host.startCapture(capture);
                } catch (RuntimeException e) {
                    err.println("vrdma host: cannot write the capture " + capture + ": " + rootMessage(e));
                    return START_FAILED;
                }
                // A server with --forever, or any run, ends with Ctrl-C or kill: the pcap then gets
                // what was still buffered, so it holds every packet up to the end, whole.
                captureHook = new Thread(
                        () -> {
                            try {
                                host.stopCapture();
                            } catch (IOException | RuntimeException e) {
                                // the process is ending: nothing more to save
                            }
                        },
                        "vrdma-capture-close");
                Runtime.getRuntime().addShutdownHook(captureHook);
            }
            if (statsIntervalMs > 0) {
                stats = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                        Thread.ofPlatform().daemon().name("vrdma-stats").factory());
                stats.scheduleAtFixedRate(
                        () -> {
                            try {
                                String line = host.statsJson();
                                out.println("stats " + line);
                                out.flush();
                            } catch (RuntimeException e) {
                                // the host is closing
                            }
                        },
                        0,
                        statsIntervalMs,
                        java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            if (verbsSocket != null) {
                return runVerbsHost(host, out, err);
            }
            out.println("vrdma host: " + (server ? "server" : "client") + ", ENI " + eniIp + " (VNI " + vni + ") on "
                    + host.describe() + ", peer ENI " + peerEniIp + " via " + peerUnderlay
                    + (loss > 0 ? String.format(Locale.ROOT, ", %.2f%% loss on the uplink", loss * 100) : ""));
            out.flush();
            return server ? runServer(host, out, err) : runClient(host, request, out, err);
        } finally {
            if (hostLinkEgress != null && verbsSocket == null) {
                printLinkCounters(host, out);
            }
            if (stats != null) {
                stats.shutdownNow();
            }
            if (captureHook != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(captureHook);
                } catch (IllegalStateException e) {
                    // shutting down: the hook closes the capture
                }
            }
            if (capture != null) {
                try {
                    out.println(" capture: " + host.stopCapture() + " packets in " + capture);
                } catch (IOException | RuntimeException e) {
                    err.println("vrdma host: the capture " + capture + " is incomplete: " + rootMessage(e));
                }
                out.flush();
            }
            host.close();
        }
    }

    /** TAP devices, extra TAP-only ENIs, QoS and delivery-port loss, as the options ask. */
    private void configureEni(RealTimeHost host, long mac, PrintWriter out) throws IOException {
        int eniIpv4 = UnderlayAddress.parseIpv4(eniIp);
        if (tap != null) {
            String name = tapName(eniIpv4);
            TapConfig config = new TapConfig(name, mac, eniIpv4, tapPrefix, tapMtu, tapNetns);
            host.attachTap(config);
            out.println(" TAP " + name + " backs ENI " + eniIp + "/" + tapPrefix + " (MAC " + config.macText()
                    + ", MTU " + tapMtu + (tapNetns == null ? "" : ", in namespace " + tapNetns) + ")");
        }
        int eniId = 2;
        for (String spec : tapEnis) {
            java.util.Map<String, String> kv = keyValues(spec);
            int v = Integer.parseInt(kv.get("vni"));
            int ip = UnderlayAddress.parseIpv4(kv.get("ip"));
            long extraMac = RealTimeHost.derivedMac(ip) | ((long) (v & 0xFF) << 32);
            TapConfig config = new TapConfig(kv.get("tap"), extraMac, ip, tapPrefix, tapMtu, kv.get("netns"));
            host.addTapEni(eniId++, v, config, UnderlayAddress.parseIpv4(kv.get("peer")));
            out.println(" TAP " + config.name() + " backs ENI " + kv.get("ip") + " of VNI " + v + ", route to "
                    + kv.get("peer"));
        }
        if (eniRate != null) {
            String[] w = qosWeights.split(":");
            long rateBps = Units.parseRateBps(eniRate);
            // A burst of 10 ms at the ENI rate: a real-time event loop's timers run late by milliseconds
            // under load, and a smaller bucket would lose the tokens of the late interval.
            host.egressQos(QosConfig.shaped(rateBps, Integer.parseInt(w[0]), Integer.parseInt(w[1]))
                    .withBurstBytes(Math.max(64 << 10, rateBps / 800))
                    .withClassQueueBytes(2 << 20));
            out.println(" ENI egress shaped to " + eniRate + "bit/s, RDMA:TCP weights " + qosWeights);
        }
        if (eniLoss > 0) {
            FaultConfig faults = FaultConfig.randomLoss(eniLoss);
            host.deliveryFaults(faults, faults);
            out.println(String.format(Locale.ROOT, " %.2f%% loss on the ENI's delivery port", eniLoss * 100));
        }
    }

    private java.util.Map<String, String> keyValues(String spec) {
        java.util.Map<String, String> kv = new java.util.HashMap<>();
        for (String part : spec.split(",")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw usage("--tap-eni: expected key=value, got " + part);
            }
            kv.put(part.substring(0, eq).strip(), part.substring(eq + 1).strip());
        }
        for (String key : new String[] {"vni", "ip", "peer", "tap"}) {
            if (!kv.containsKey(key)) {
                throw usage("--tap-eni needs " + key + "=: " + spec);
            }
        }
        return kv;
    }

    private Request validateVerbsHost() {
        if (server || client) {
            throw usage("--verbs-socket runs no test: leave out --server and --client");
        }
        requireAddresses();
        if (!(loss >= 0 && loss < 1)) {
            throw usage("--loss must be in [0, 1)");
        }
        if (oobViaEni) {
            throw usage("--oob-via-eni is for --server and --client: a verbs host runs no out-of-band exchange");
        }
        validateEniOptions();
        return null;
    }

    /**
     * The options that shape the host's ENIs in both modes (MAC, VNI, TAPs, extra TAP-only ENIs,
     * QoS, delivery loss, stats): checked before the host starts, so a bad value is a usage error
     * (exit 2), never a half-started host.
     */
    private void validateEniOptions() {
        if (eniMac != null) {
            parseMac(eniMac);
        }
        if (vni <= 0 || vni >= 1 << 24) {
            throw usage("--vni must be 1..16777215");
        }
        if (!(eniLoss >= 0 && eniLoss < 1)) {
            throw usage("--eni-loss must be in [0, 1)");
        }
        if (hostLink != null) {
            if (loss > 0) {
                throw usage("--loss and --host-link both set the uplink: give the loss in --host-link's faults");
            }
            try {
                hostLinkEgress = LinkEgress.realTime(LinkEgress.parse(hostLink));
            } catch (RuntimeException e) {
                throw usage("--host-link: " + rootMessage(e));
            }
        }
        if (eniRate != null) {
            try {
                if (Units.parseRateBps(eniRate) <= 0) {
                    throw new IllegalArgumentException("not positive");
                }
                String[] w = qosWeights.split(":");
                if (w.length != 2 || Integer.parseInt(w[0]) <= 0 || Integer.parseInt(w[1]) <= 0) {
                    throw new IllegalArgumentException("weights");
                }
            } catch (RuntimeException e) {
                throw usage("--eni-rate must be a rate such as 300M and --qos-weights two positive integers R:T");
            }
        }
        if (tap != null) {
            int eniIpv4 = UnderlayAddress.parseIpv4(eniIp);
            tapConfig("--tap", tapName(eniIpv4), eniIpv4, tapNetns);
        }
        for (String spec : tapEnis) {
            java.util.Map<String, String> kv = keyValues(spec);
            int v;
            int ip;
            try {
                v = Integer.parseInt(kv.get("vni"));
                ip = UnderlayAddress.parseIpv4(kv.get("ip"));
                UnderlayAddress.parseIpv4(kv.get("peer"));
            } catch (RuntimeException e) {
                throw usage("--tap-eni: bad vni, ip or peer: " + spec);
            }
            if (v <= 0 || v >= 1 << 24) {
                throw usage("--tap-eni: vni must be 1..16777215: " + spec);
            }
            tapConfig("--tap-eni", kv.get("tap"), ip, kv.get("netns"));
        }
        if (statsIntervalMs < 0) {
            throw usage("--stats-interval must be >= 0");
        }
    }

    /** The main ENI's TAP: --tap's name, or one made from the ENI address's last byte. */
    private String tapName(int eniIpv4) {
        return tap.isEmpty() ? "vrdma" + (eniIpv4 & 0xFF) : tap;
    }

    /** The TAP's name, --tap-prefix, --tap-mtu and namespace as TapConfig accepts them. */
    private void tapConfig(String option, String name, int ipv4, String netns) {
        try {
            new TapConfig(name, 0x020000000000L, ipv4, tapPrefix, tapMtu, netns);
        } catch (IllegalArgumentException e) {
            throw usage(option + ": " + e.getMessage() + " (--tap-prefix, --tap-mtu and the TAP's name apply)");
        }
    }

    /** Serves the native verbs library's control socket on this host's vNIC until the process ends. */
    private int runVerbsHost(RealTimeHost host, PrintWriter out, PrintWriter err) {
        VnicControlServer verbs;
        try {
            verbs = VnicControlServer.start(
                    Path.of(verbsSocket), host.endpoint().device(), host.executor());
        } catch (IOException e) {
            err.println("vrdma host: cannot serve verbs on " + verbsSocket + ": " + e.getMessage());
            return START_FAILED;
        }
        Thread hook = new Thread(
                () -> {
                    printExitCounters(host, out);
                    verbs.close();
                    try {
                        // Killed: the pcap gets what was buffered, so it ends on a whole packet.
                        host.stopCapture();
                    } catch (IOException | RuntimeException e) {
                        // nothing more to save
                    }
                },
                "vrdma-verbs-close");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            out.println("vrdma host: verbs, ENI " + eniIp + " (VNI " + vni + ", GID ::ffff:" + eniIp + ") on "
                    + host.describe() + ", peer ENI " + peerEniIp + " via " + peerUnderlay);
            out.println(" serving verbs on " + verbsSocket + " (LD_LIBRARY_PATH=<guest-driver-shim/target/native>"
                    + " VRDMA_SOCKET=" + verbsSocket + ")");
            out.flush();
            while (true) {
                Thread.sleep(1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } finally {
            verbs.close();
        }
    }

    /**
     * On exit, where this host's packets went: its transport's counters (timeouts, retransmissions,
     * NAKs, duplicates) and the switch's (drops by reason, ports' queue drops), one line each, so
     * that runs between two such hosts can be compared by loss rather than by rate alone.
     */
    private static void printExitCounters(RealTimeHost host, PrintWriter out) {
        try {
            TransportCounters t = host.transportCounters();
            out.println("vrdma host: transport tx " + t.txPackets + " pkts, rx " + t.rxPackets + " pkts, acks tx "
                    + t.txAcks + " rx " + t.rxAcks + ", retransmitted " + t.retransmittedPackets + ", timeouts "
                    + t.timeouts + ", tail probes " + t.tailProbes + ", NAK seq sent " + t.seqNaksSent + " received "
                    + t.seqNaksReceived + ", duplicates " + t.duplicateRequests + ", out of sequence "
                    + t.outOfSequence + ", dropped " + t.droppedPackets);
            out.println("vrdma host: switch " + host.statsJson());
        } catch (RuntimeException e) {
            out.println("vrdma host: counters unavailable: " + e.getMessage());
        }
        out.flush();
    }

    /** What the uplink emulates, one line: rate, buffer, marking, faults. */
    public static String describe(EgressConfig e) {
        StringBuilder b = new StringBuilder();
        b.append(e.rateBps() == 0 ? "unlimited rate" : String.format(Locale.ROOT, "%.3f Gbit/s", e.rateBps() / 1e9));
        b.append(", buffer ").append(e.bufferBytes()).append(" B");
        if (e.ecnMarker() != null) {
            b.append(", ECN ").append(e.ecnMarker());
        }
        b.append(", data ").append(faultText(e.dataFaults()));
        b.append(", control ").append(faultText(e.controlFaults()));
        return b.toString();
    }

    private static String faultText(FaultConfig f) {
        if (f.isNone()) {
            return "no faults";
        }
        return String.format(
                Locale.ROOT,
                "loss %.4f, burst p %.4f r %.4f h %.2f, duplicate %.4f, reorder %.4f (%d ns), delay %d ns, jitter %d ns",
                f.lossProbability(),
                f.burstEnterProbability(),
                f.burstExitProbability(),
                f.burstLossProbability(),
                f.duplicateProbability(),
                f.reorderProbability(),
                f.reorderDelayNs(),
                f.delayNs(),
                f.jitterNs());
    }

    /** The host link's counters, one line the lab results read (with --host-link). */
    private static void printLinkCounters(RealTimeHost host, PrintWriter out) {
        try {
            long[] c = host.uplinkCounters();
            out.println("vrdma host: " + LinkEgress.countersLine(c));
        } catch (RuntimeException e) {
            out.println("vrdma host: host link counters unavailable: " + e.getMessage());
        }
        out.flush();
    }

    /** The four addresses every host needs: present and well formed. */
    private void requireAddresses() {
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
    }

    private Request validate() {
        if (server == client) {
            throw usage("say --server or --client (or use a subcommand: create, list, get, delete)");
        }
        requireAddresses();
        validateEniOptions();
        if (oobViaEni && (tap == null || tapNetns != null)) {
            throw usage("--oob-via-eni needs --tap (in this namespace, without --tap-netns)");
        }
        if (!(loss >= 0 && loss < 1)) {
            throw usage("--loss must be in [0, 1)");
        }
        if (oobPort <= 0 || oobPort > 0xFFFF) {
            throw usage("--oob-port must be 1..65535");
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
        String ip = oobViaEni ? eniIp : UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(host.underlayAddress()));
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
        String ip = oobViaEni
                ? peerEniIp
                : UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(UnderlayAddress.parse(peerUnderlay)));
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
        // An ENI's MAC is a station's: a group address (multicast, broadcast) or zero is no
        // frame's source, and the kernel refuses it on a TAP.
        if (mac == 0 || (mac & (1L << 40)) != 0) {
            throw usage("--eni-mac must be a unicast address, not all zeros, multicast or broadcast: " + text);
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
