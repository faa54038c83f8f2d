package org.vrdma.harness.perf;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import org.HdrHistogram.Histogram;
import org.vrdma.harness.perf.OobLine.Channel;
import org.vrdma.harness.perf.OobLine.OobException;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.WrOpcode;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * perftest between two processes: each runs a {@link RealTimeHost}, and the two exchange queue
 * pair number, PSN, rkey, buffer address, ENI address and MAC over a TCP socket ({@link OobLine})
 * before the RDMA traffic starts, as perftest does.
 *
 * <p>The exchange, client first:
 *
 * <pre>
 * client: HELLO v=1 test=write_bw size=65536 iterations=16384 window=67108864 verify=1 seed=1
 *               txdepth=64 mtu=4096 recovery=sr qpn=0x11 psn=0x3a2b1c rkey=0x.. vaddr=0x.. ip=10.0.0.2 mac=0x..
 * server: READY qpn=.. psn=.. rkey=.. vaddr=.. ip=10.0.0.1 mac=0x..      (or ERROR reason=...)
 *   then, with verify=1, once per round of `window` bytes:
 * client: CHECK round=0 bytes=67108864      (write_bw: after the round's writes completed)
 * server: OK                                (or MISMATCH offset=N)
 * client: FILL round=0 bytes=67108864       (read_bw: before the round's reads)
 * server: OK
 *   and at the end
 * client: DONE
 * server: BYE
 * </pre>
 *
 * Round {@code r}'s bytes are a pseudo-random pattern both sides derive from {@code seed} and
 * {@code r}, so the receiving side checks every byte it got without the data crossing the TCP
 * socket.
 */
public final class RemotePerftest {
    /** Default window: how many bytes one round covers, and the registered buffer's size. */
    public static final int DEFAULT_WINDOW = 64 << 20;

    /** The perftest workloads a client can ask for. */
    public enum Test {
        WRITE_BW("write_bw", "RDMA_Write BW Test"),
        READ_BW("read_bw", "RDMA_Read BW Test"),
        SEND_LAT("send_lat", "Send Latency Test");

        public final String id;
        public final String title;

        Test(String id, String title) {
            this.id = id;
            this.title = title;
        }

        public static Test of(String id) {
            for (Test t : values()) {
                if (t.id.equals(id)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("unknown test " + id + " (write_bw, read_bw or send_lat)");
        }
    }

    /** What the client asks for. {@code window} is a multiple of {@code size}. */
    public record Request(
            Test test,
            int size,
            long iterations,
            long window,
            boolean verify,
            long seed,
            int txDepth,
            Mtu mtu,
            RecoveryMode recovery) {}

    /** One side's connection data, as perftest prints and exchanges it. */
    public record Address(int qpn, int psn, int rkey, long vaddr, int ipv4, long mac) {
        OobLine into(OobLine m) {
            return m.withHex("qpn", qpn)
                    .withHex("psn", psn)
                    .withHex("rkey", rkey & 0xFFFF_FFFFL)
                    .withHex("vaddr", vaddr)
                    .with("ip", UnderlayAddress.ipv4ToString(ipv4))
                    .withHex("mac", mac);
        }

        static Address from(OobLine m) {
            return new Address(
                    (int) m.number("qpn"),
                    (int) m.number("psn"),
                    (int) m.number("rkey"),
                    m.number("vaddr"),
                    UnderlayAddress.parseIpv4(m.text("ip")),
                    m.number("mac"));
        }

        String describe() {
            return String.format(
                    "QPN 0x%04x PSN 0x%06x RKey 0x%08x VAddr 0x%016x IP %s MAC %012x",
                    qpn, psn, rkey, vaddr, UnderlayAddress.ipv4ToString(ipv4), mac);
        }
    }

    /** The client's result. {@code mismatchOffset} is -1 when the data arrived intact or was not checked. */
    public record Result(
            Request request,
            PerftestSuite.BandwidthRow bandwidth,
            PerftestSuite.LatencyRow latency,
            long bytesVerified,
            long mismatchOffset,
            long wallNs,
            TransportCounters counters,
            long injectedLosses) {}

    /** Failure of the RDMA test itself: an error completion, or no progress within the limit. */
    public static final class TestFailure extends RuntimeException {
        public TestFailure(String message) {
            super(message);
        }
    }

    private RemotePerftest() {}

    /** The bytes of round {@code round}: identical in every JVM for the same seed. */
    public static void pattern(long seed, long round, byte[] into, int length) {
        new SplittableRandom(seed * 0x9E37_79B9_7F4A_7C15L + round).nextBytes(into);
        if (length < into.length) {
            Arrays.fill(into, length, into.length, (byte) 0);
        }
    }

    private static int randomPsn() {
        return ThreadLocalRandom.current().nextInt(1 << 24);
    }

    private static Address local(RealTimeHost host, QueuePair qp, int psn) {
        RdmaEndpoint ep = host.endpoint();
        return new Address(
                qp.qpNum(),
                psn,
                host.call(() -> ep.mr().rkey()),
                RdmaEndpoint.BUFFER_VA,
                host.eniIpv4(),
                host.eniMac());
    }

    private static void printHeader(
            PrintWriter out, RealTimeHost host, Request r, Address local, Address remote, String remoteOob) {
        out.println("---------------------------------------------------------------------------------------");
        out.println("                    " + r.test().title);
        out.println(" Device         : " + host.endpoint().device().name() + " on " + host.describe());
        out.println(" Transport type : RoCEv2 over Geneve     Connection type : RC     Number of qps : 1");
        out.printf(
                " TX depth       : %d     Mtu : %d[B]     Recovery : %s     Verify : %s%n",
                r.txDepth(),
                r.mtu().bytes(),
                r.recovery(),
                !r.verify() ? "OFF" : r.test() == Test.SEND_LAT ? "OFF (send_lat checks no payload)" : "ON");
        out.println(" Peer (out of band) : " + remoteOob);
        out.println(" local address:  " + local.describe());
        out.println(" remote address: " + remote.describe());
        out.flush();
    }

    // ---------------------------------------------------------------------------------- client

    /** Runs {@code request} against the server on {@code channel}; prints as perftest does. */
    public static Result runClient(RealTimeHost host, Channel channel, Request r, long testTimeoutNs, PrintWriter out) {
        long timeoutMs = testTimeoutNs / 1_000_000;
        RdmaEndpoint ep = host.endpoint();
        long needed = r.test() == Test.SEND_LAT ? 2L * r.size() : r.window();
        if (needed > ep.memory().capacity()) {
            throw new IllegalArgumentException("the test needs " + needed + " B of buffer, this host has "
                    + ep.memory().capacity());
        }
        int depth = Math.max(r.txDepth(), 32);
        QueuePair qp = host.call(() -> ep.createRcQp(r.recovery(), depth));
        int psn = randomPsn();
        Address me = local(host, qp, psn);
        channel.send(me.into(OobLine.of("HELLO")
                .with("v", 1)
                .with("test", r.test().id)
                .with("size", r.size())
                .with("iterations", r.iterations())
                .with("window", r.window())
                .with("verify", r.verify() ? 1 : 0)
                .with("seed", r.seed())
                .with("txdepth", r.txDepth())
                .with("mtu", r.mtu().bytes())
                .with("recovery", r.recovery() == RecoveryMode.GO_BACK_N ? "gbn" : "sr")));
        Address peer = Address.from(channel.expect("READY", timeoutMs));
        printHeader(out, host, r, me, peer, channel.remote());
        host.call(() -> {
            RdmaEndpoint.connect(qp, peer.qpn(), peer.ipv4(), peer.mac(), r.mtu(), psn, peer.psn());
            return null;
        });
        TransportCounters before = host.transportCounters();
        long lossesBefore = host.injectedLosses();
        long wallStart = System.nanoTime();
        long deadline = wallStart + testTimeoutNs;
        Result result;
        if (r.test() == Test.SEND_LAT) {
            LatencyTest test = new LatencyTest(ep, qp, ep, qp, r.size(), r.iterations());
            host.call(() -> {
                test.startInitiator();
                return null;
            });
            awaitOrFail(
                    host, test::isDone, deadline, () -> test.completed() + " of " + r.iterations() + " round trips");
            if (test.failure() != null) {
                throw new TestFailure("SEND latency failed: " + test.failure());
            }
            Histogram h = test.histogram();
            PerftestSuite.LatencyRow row = new PerftestSuite.LatencyRow(
                    r.size(),
                    test.completed(),
                    h.getValueAtPercentile(50),
                    h.getValueAtPercentile(99),
                    h.getValueAtPercentile(99.9),
                    h.getMaxValue());
            result = new Result(r, null, row, 0, -1, System.nanoTime() - wallStart, null, 0);
        } else {
            result = clientBandwidth(host, channel, qp, peer, r, deadline, wallStart);
        }
        channel.send(OobLine.of("DONE"));
        channel.expect("BYE", timeoutMs);
        TransportCounters delta = host.transportCounters().since(before);
        long losses = host.injectedLosses() - lossesBefore;
        result = new Result(
                r,
                result.bandwidth(),
                result.latency(),
                result.bytesVerified(),
                result.mismatchOffset(),
                result.wallNs(),
                delta,
                losses);
        print(out, result);
        return result;
    }

    private static Result clientBandwidth(
            RealTimeHost host, Channel channel, QueuePair qp, Address peer, Request r, long deadline, long wallStart) {
        RdmaEndpoint ep = host.endpoint();
        boolean write = r.test() == Test.WRITE_BW;
        int window = (int) r.window();
        byte[] bytes = new byte[window];
        long perRound = window / r.size();
        long remaining = r.iterations();
        long completed = 0;
        long elapsedNs = 0;
        long verified = 0;
        long mismatch = -1;
        long timeoutMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        for (long round = 0; remaining > 0; round++) {
            long iterations = Math.min(perRound, remaining);
            int roundBytes = (int) (Math.min(iterations, perRound) * r.size());
            if (write) {
                if (round == 0 || r.verify()) {
                    pattern(r.seed(), round, bytes, window);
                    host.call(() -> {
                        ep.memory().write(0, bytes, 0, window);
                        return null;
                    });
                }
            } else if (r.verify()) {
                channel.send(OobLine.of("FILL").with("round", round).with("bytes", roundBytes));
                channel.expect("OK", timeoutMs);
                host.call(() -> {
                    ep.memory().write(0, new byte[window], 0, window);
                    return null;
                });
            }
            BandwidthTest test = new BandwidthTest(
                    ep,
                    qp,
                    write ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_READ,
                    r.size(),
                    iterations,
                    r.txDepth(),
                    peer.vaddr(),
                    peer.rkey(),
                    window);
            host.call(() -> {
                test.start();
                return null;
            });
            long done = completed;
            awaitOrFail(
                    host,
                    test::isDone,
                    deadline,
                    () -> (done + test.completed()) + " of " + r.iterations() + " " + r.test().id + " messages");
            if (test.failure() != null) {
                throw new TestFailure(r.test().id + " " + r.size() + " B failed: " + test.failure());
            }
            completed += test.completed();
            elapsedNs += test.elapsedNs();
            remaining -= iterations;
            if (r.verify() && mismatch < 0) {
                if (write) {
                    channel.send(OobLine.of("CHECK").with("round", round).with("bytes", roundBytes));
                    OobLine answer = channel.receive(timeoutMs);
                    if (answer.verb().equals("MISMATCH")) {
                        mismatch = verified + answer.number("offset");
                    } else if (!answer.verb().equals("OK")) {
                        throw new OobException("expected OK or MISMATCH, got: " + answer);
                    }
                } else {
                    byte[] arrived = new byte[roundBytes];
                    host.call(() -> {
                        ep.memory().read(0, arrived, 0, roundBytes);
                        return null;
                    });
                    pattern(r.seed(), round, bytes, window);
                    int at = Arrays.mismatch(arrived, 0, roundBytes, bytes, 0, roundBytes);
                    if (at >= 0) {
                        mismatch = verified + at;
                    }
                }
                if (mismatch < 0) {
                    verified += roundBytes;
                }
            }
        }
        double gbps = elapsedNs <= 0 ? 0 : completed * (double) r.size() * 8 / elapsedNs;
        double mpps = elapsedNs <= 0 ? 0 : completed * 1e3 / elapsedNs;
        PerftestSuite.BandwidthRow row = new PerftestSuite.BandwidthRow(
                write ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_READ,
                r.size(),
                completed,
                gbps,
                mpps,
                !r.verify() || mismatch < 0);
        return new Result(r, row, null, verified, mismatch, System.nanoTime() - wallStart, null, 0);
    }

    private static void awaitOrFail(
            RealTimeHost host, java.util.function.BooleanSupplier done, long deadline, Supplier progress) {
        if (!host.await(done, Math.max(0, deadline - System.nanoTime()))) {
            throw new TestFailure("no completion within the test timeout: " + progress.get() + " completed");
        }
    }

    private interface Supplier {
        String get();
    }

    private static void print(PrintWriter out, Result r) {
        if (r.bandwidth() != null) {
            PerftestSuite.printBandwidth(out, r.request().test().title, List.of(r.bandwidth()));
            long bytes = r.bandwidth().iterations() * r.request().size();
            out.printf(
                    " moved %d bytes in %.3f s wall time (%.2f Gb/s including setup and verification)%n",
                    bytes, r.wallNs() / 1e9, bytes * 8.0 / Math.max(1, r.wallNs()));
            if (r.request().verify()) {
                out.println(
                        r.mismatchOffset() < 0
                                ? " verify: " + r.bytesVerified() + " bytes byte-exact"
                                : " verify: MISMATCH at byte " + r.mismatchOffset());
            }
        } else {
            PerftestSuite.printLatency(out, r.request().test().title, List.of(r.latency()));
            if (r.request().verify()) {
                // The ping-pong's payloads are not compared: say so rather than let --verify pass.
                out.println(" verify: not done: send_lat checks no payload (write_bw and read_bw check every byte)");
            }
        }
        PerftestSuite.printCounters(out, r.counters(), r.injectedLosses(), 0);
        out.println("---------------------------------------------------------------------------------------");
        out.flush();
    }

    // ---------------------------------------------------------------------------------- server

    /** Serves one client on {@code channel}: connects a QP to it and answers its requests until DONE. */
    public static void serve(RealTimeHost host, Channel channel, long testTimeoutNs, PrintWriter out) {
        long timeoutMs = testTimeoutNs / 1_000_000;
        RdmaEndpoint ep = host.endpoint();
        OobLine hello = channel.expect("HELLO", timeoutMs);
        Request r;
        Address peer;
        try {
            if (hello.number("v") != 1) {
                throw new IllegalArgumentException("protocol version " + hello.text("v") + " (this host speaks 1)");
            }
            int mtuBytes = (int) hello.number("mtu");
            r = new Request(
                    Test.of(hello.text("test")),
                    (int) hello.number("size"),
                    hello.number("iterations"),
                    hello.number("window"),
                    hello.number("verify") != 0,
                    hello.number("seed"),
                    (int) hello.number("txdepth"),
                    Arrays.stream(Mtu.values())
                            .filter(m -> m.bytes() == mtuBytes)
                            .findFirst()
                            .orElseThrow(() -> new IllegalArgumentException("bad mtu " + mtuBytes)),
                    hello.text("recovery").equals("gbn") ? RecoveryMode.GO_BACK_N : RecoveryMode.SELECTIVE_REPEAT);
            peer = Address.from(hello);
            long needed = r.test() == Test.SEND_LAT ? 2L * r.size() : r.window();
            if (r.size() <= 0 || needed > ep.memory().capacity() || r.window() % r.size() != 0) {
                throw new IllegalArgumentException("size " + r.size() + " / window " + r.window()
                        + " do not fit this host's " + ep.memory().capacity() + " B buffer");
            }
            if (peer.ipv4() != host.peerEniIpv4()) {
                throw new IllegalArgumentException("client ENI " + UnderlayAddress.ipv4ToString(peer.ipv4())
                        + " is not this host's configured peer "
                        + UnderlayAddress.ipv4ToString(host.peerEniIpv4()));
            }
        } catch (IllegalArgumentException | OobException e) {
            channel.send(OobLine.of("ERROR").with("reason", e.getMessage().replace(' ', '_')));
            throw new OobException("refused the client: " + e.getMessage());
        }
        int depth = Math.max(r.txDepth(), 32);
        QueuePair qp = host.call(() -> ep.createRcQp(r.recovery(), depth));
        int psn = randomPsn();
        Address me = local(host, qp, psn);
        host.call(() -> {
            RdmaEndpoint.connect(qp, peer.qpn(), peer.ipv4(), peer.mac(), r.mtu(), psn, peer.psn());
            return null;
        });
        LatencyTest latency = null;
        if (r.test() == Test.SEND_LAT) {
            LatencyTest t = new LatencyTest(ep, qp, ep, qp, r.size(), Long.MAX_VALUE);
            host.call(() -> {
                t.startResponder();
                return null;
            });
            latency = t;
        }
        TransportCounters before = host.transportCounters();
        long lossesBefore = host.injectedLosses();
        channel.send(me.into(OobLine.of("READY")));
        printHeader(out, host, r, me, peer, channel.remote());
        int window = (int) r.window();
        byte[] expected = new byte[Math.max(window, 1)];
        long verified = 0;
        boolean intact = true;
        while (true) {
            OobLine m = channel.receive(timeoutMs);
            switch (m.verb()) {
                case "CHECK" -> {
                    int bytes = (int) Math.min(m.number("bytes"), window);
                    pattern(r.seed(), m.number("round"), expected, window);
                    byte[] arrived = new byte[bytes];
                    host.call(() -> {
                        ep.memory().read(0, arrived, 0, bytes);
                        return null;
                    });
                    int at = Arrays.mismatch(arrived, 0, bytes, expected, 0, bytes);
                    if (at < 0) {
                        verified += bytes;
                        channel.send(OobLine.of("OK"));
                    } else {
                        intact = false;
                        channel.send(OobLine.of("MISMATCH").with("offset", at));
                    }
                }
                case "FILL" -> {
                    pattern(r.seed(), m.number("round"), expected, window);
                    host.call(() -> {
                        ep.memory().write(0, expected, 0, window);
                        return null;
                    });
                    channel.send(OobLine.of("OK"));
                }
                case "DONE" -> {
                    if (latency != null && latency.failure() != null) {
                        throw new TestFailure("SEND latency responder failed: " + latency.failure());
                    }
                    channel.send(OobLine.of("BYE"));
                    TransportCounters delta = host.transportCounters().since(before);
                    if (r.verify() && r.test() == Test.WRITE_BW) {
                        out.println(
                                intact
                                        ? " verify: " + verified + " bytes written by the client, byte-exact"
                                        : " verify: MISMATCH in the client's writes");
                    }
                    PerftestSuite.printCounters(out, delta, host.injectedLosses() - lossesBefore, 0);
                    out.println(
                            "---------------------------------------------------------------------------------------");
                    out.flush();
                    if (!intact) {
                        throw new TestFailure("the client's data did not arrive intact");
                    }
                    return;
                }
                default -> throw new OobException("unexpected message from the client: " + m);
            }
        }
    }
}
