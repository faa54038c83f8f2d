package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.vrdma.harness.backend.VrdmaJava;
import org.vrdma.verbs.IbvAh;
import org.vrdma.verbs.IbvAhAttr;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.IbvGid;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpAttr;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvRecvWr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcFlags;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * JVM applications on the Java verbs API attached to two {@code ./vrdma host --verbs-socket}
 * processes joined over a real UDP underlay: RC WRITE, SEND and READ between them byte for byte,
 * the API's example program as two JVMs, a Java client against Debian's unmodified {@code
 * ibv_rc_pingpong}, and a killed JVM whose QPs and regions the host process releases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JavaAttachTest {
    private static final String IP = "127.0.0.1";
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    private static final int ACCESS =
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;

    private NativeVerbsHosts hosts;
    private final List<Process> children = new ArrayList<>();

    @BeforeAll
    void startHosts() throws Exception {
        hosts = new NativeVerbsHosts(
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.1",
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.2",
                IP);
    }

    @AfterAll
    void stopHosts() throws Exception {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        if (hosts != null) {
            hosts.close();
        }
    }

    /** One application's objects on one host process. */
    private static final class Side implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx;
        final IbvPd pd;
        final IbvCompChannel channel;
        final IbvCq cq;
        final IbvMr mr;
        final IbvQp qp;

        Side(Path socket, int bytes, boolean zeroCopy) {
            ctx = IbvDeviceList.attach(socket).open();
            pd = ctx.allocPd();
            channel = ctx.createCompChannel();
            cq = ctx.createCq(256, channel);
            mr = pd.regMr(zeroCopy ? ctx.allocBuffer(bytes, arena) : arena.allocate(bytes, 4096), ACCESS);
            qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 64));
        }

        MemorySegment buf() {
            return mr.segment();
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            cq.close();
            channel.close();
            pd.close();
            ctx.close();
            arena.close();
        }
    }

    /** The next completion of {@code cq}: polls, arms, sleeps on the channel (bounded). */
    private static IbvWc await(IbvCq cq, IbvCompChannel channel) {
        IbvWc[] wcs = IbvWc.array(1);
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            cq.reqNotify(false);
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            IbvCq ev = channel.getCqEvent(java.time.Duration.ofMillis(500));
            if (ev != null) {
                ev.ackEvents(1);
            }
        }
        throw new AssertionError("no completion within 60 s");
    }

    @Test
    void javaApplicationsOnTwoHostProcessesWriteSendAndReadByteExact() throws Exception {
        int bytes = 1 << 20;
        try (Side a = new Side(hosts.socketA, bytes, true);
                Side b = new Side(hosts.socketB, bytes, false)) {
            assertThat(a.ctx.device().gid()).isEqualTo(IbvGid.parse("::ffff:10.9.0.1"));
            assertThat(b.ctx.device().gid()).isEqualTo(IbvGid.parse("::ffff:10.9.0.2"));
            assertThat(a.mr.isZeroCopy()).isTrue();
            assertThat(b.mr.isZeroCopy()).isFalse();
            QpInfo ia = QpInfo.of(a.qp, a.mr);
            QpInfo ib = QpInfo.of(b.qp, b.mr);
            QpConnector.rcToRts(a.qp, ia, ib);
            QpConnector.rcToRts(b.qp, ib, ia);

            byte[] pattern = new byte[bytes];
            new Random(42).nextBytes(pattern);
            MemorySegment.copy(pattern, 0, a.buf(), ValueLayout.JAVA_BYTE, 0, bytes);
            // WRITE 1 MiB from host A's application into host B's.
            IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, bytes);
            w.wrId = 1;
            w.opcode = WrOpcode.RDMA_WRITE;
            w.sendFlags = SendFlags.SIGNALED;
            w.remoteAddr = b.mr.addr();
            w.rkey = b.mr.rkey();
            long startNs = System.nanoTime();
            a.qp.postSend(w);
            IbvWc wc = await(a.cq, a.channel);
            System.out.printf(
                    "WRITE 1 MiB host A -> host B (zero-copy source, process_vm sink): %.1f ms%n",
                    (System.nanoTime() - startNs) / 1e6);
            assertThat(wc.status).as(wc.toString()).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc.opcode).isEqualTo(WcOpcode.RDMA_WRITE);
            assertThat(b.buf().toArray(ValueLayout.JAVA_BYTE)).isEqualTo(pattern);

            // SEND with immediate, 8 KiB, from B back into a receive at A.
            IbvRecvWr r = new IbvRecvWr(1).addSge(a.mr, 500_000, 8192);
            r.wrId = 7;
            a.qp.postRecv(r);
            b.buf().asSlice(100, 8192).fill((byte) 0x6D);
            IbvSendWr s = new IbvSendWr(1).addSge(b.mr, 100, 8192);
            s.wrId = 2;
            s.opcode = WrOpcode.SEND_WITH_IMM;
            s.immData = 0x1234;
            s.sendFlags = SendFlags.SIGNALED;
            b.qp.postSend(s);
            assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.SUCCESS);
            IbvWc recv = await(a.cq, a.channel);
            assertThat(recv.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(recv.opcode).isEqualTo(WcOpcode.RECV);
            assertThat(recv.wrId).isEqualTo(7);
            assertThat(recv.byteLen).isEqualTo(8192);
            assertThat(recv.immData).isEqualTo(0x1234);
            assertThat(recv.wcFlags & WcFlags.WITH_IMM).isNotZero();
            assertThat(a.buf().asSlice(500_000, 8192).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x6D);

            // READ 256 KiB of A's region into B.
            b.buf().fill((byte) 0);
            IbvSendWr rd = new IbvSendWr(1).addSge(b.mr, 0, 256 * 1024);
            rd.wrId = 3;
            rd.opcode = WrOpcode.RDMA_READ;
            rd.sendFlags = SendFlags.SIGNALED;
            rd.remoteAddr = a.mr.addr() + 4096;
            rd.rkey = a.mr.rkey();
            b.qp.postSend(rd);
            IbvWc rwc = await(b.cq, b.channel);
            assertThat(rwc.status).as(rwc.toString()).isEqualTo(WcStatus.SUCCESS);
            assertThat(rwc.byteLen).isEqualTo(256 * 1024);
            assertThat(b.buf().asSlice(0, 256 * 1024).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(a.buf().asSlice(4096, 256 * 1024).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void javaApplicationsOnTwoHostProcessesPingPongUdDatagramsAndReplyFromTheGrh() throws Exception {
        int qkey = 0x1111;
        try (Side a = new Side(hosts.socketA, 1 << 16, true);
                Side b = new Side(hosts.socketB, 1 << 16, false);
                IbvQp ua = a.ctx.createQp(a.pd, IbvQpInitAttr.ud(a.cq, 16));
                IbvQp ub = b.ctx.createQp(b.pd, IbvQpInitAttr.ud(b.cq, 16))) {
            QpConnector.udToRts(ua, qkey, QpInfo.of(ua, a.mr));
            QpConnector.udToRts(ub, qkey, QpInfo.of(ub, b.mr));
            byte[] ping = new byte[4096];
            new Random(7).nextBytes(ping);
            MemorySegment.copy(ping, 0, a.buf(), ValueLayout.JAVA_BYTE, 0, ping.length);
            IbvRecvWr r = new IbvRecvWr(1).addSge(b.mr, 0, 40 + 4096);
            r.wrId = 30;
            ub.postRecv(r);
            try (IbvAh toB = a.pd.createAh(IbvAhAttr.of(b.ctx.device().gid()))) {
                IbvSendWr s = new IbvSendWr(1).addSge(a.mr, 0, ping.length);
                s.wrId = 31;
                s.opcode = WrOpcode.SEND_WITH_IMM;
                s.immData = 0x7E;
                s.sendFlags = SendFlags.SIGNALED;
                s.ah = toB;
                s.remoteQpn = ub.qpNum();
                s.remoteQkey = qkey;
                ua.postSend(s);
                assertThat(await(a.cq, a.channel).status).isEqualTo(WcStatus.SUCCESS);
            }
            IbvWc got = await(b.cq, b.channel);
            assertThat(got.status).as(got.toString()).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.wrId).isEqualTo(30);
            assertThat(got.byteLen).as("40-byte GRH + payload").isEqualTo(40 + ping.length);
            assertThat(got.wcFlags & WcFlags.GRH).isNotZero();
            assertThat(got.immData).isEqualTo(0x7E);
            assertThat(got.srcQp).isEqualTo(ua.qpNum());
            assertThat(IbvGid.ofIpv4(got.srcIpv4)).isEqualTo(a.ctx.device().gid());
            assertThat(b.buf().asSlice(40, ping.length).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(ping);

            // The pong goes back to the address the GRH names (ibv_create_ah_from_wc).
            IbvRecvWr back = new IbvRecvWr(1).addSge(a.mr, 16384, 40 + 4096);
            back.wrId = 32;
            ua.postRecv(back);
            try (IbvAh toA = b.pd.createAhFromWc(got, b.buf().asSlice(0, 40), 1)) {
                assertThat(toA.dgid()).isEqualTo(a.ctx.device().gid());
                IbvSendWr pong = new IbvSendWr(1).addSge(b.mr, 40, ping.length);
                pong.wrId = 33;
                pong.sendFlags = SendFlags.SIGNALED;
                pong.ah = toA;
                pong.remoteQpn = got.srcQp;
                pong.remoteQkey = qkey;
                ub.postSend(pong);
                assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.SUCCESS);
            }
            IbvWc ret = await(a.cq, a.channel);
            assertThat(ret.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(ret.wrId).isEqualTo(32);
            assertThat(ret.srcQp).isEqualTo(ub.qpNum());
            assertThat(a.buf().asSlice(16384 + 40, ping.length).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(ping);
        }
    }

    @Test
    void theExampleProgramRunsAsTwoJvmsOnTwoHostProcesses() throws Exception {
        int port = HostProcesses.freeTcpPort(IP);
        Path serverOut = Files.createTempFile("vrdma-attach-server", ".out");
        Path clientOut = Files.createTempFile("vrdma-attach-client", ".out");
        try {
            Process server = example(hosts.socketA, serverOut, "server", Integer.toString(port));
            awaitLine(server, serverOut, "server: waiting for a client");
            Process client = example(hosts.socketB, clientOut, "client", IP, Integer.toString(port));
            assertThat(HostProcesses.waitFor(client, 60, TimeUnit.SECONDS, "the client JVM"))
                    .as(Files.readString(clientOut))
                    .isZero();
            assertThat(HostProcesses.waitFor(server, 30, TimeUnit.SECONDS, "the server JVM"))
                    .as(Files.readString(serverOut))
                    .isZero();
            assertThat(Files.readString(clientOut))
                    .contains("client: RDMA_WRITE SUCCESS, then RDMA_READ SUCCESS: \"hello over vRDMA\"");
            assertThat(Files.readString(serverOut))
                    .contains("server: RECV_RDMA_WITH_IMM SUCCESS, imm 0xc0ffee, 65536 bytes: \"hello over vRDMA\"");
        } finally {
            Files.deleteIfExists(serverOut);
            Files.deleteIfExists(clientOut);
        }
    }

    @Test
    void aKilledJavaApplicationsQueuePairsAndRegionsAreReleasedByTheHostProcess() throws Exception {
        long hostA = hostPid(hosts.socketA);
        int port = HostProcesses.freeTcpPort(IP);
        Path out = Files.createTempFile("vrdma-attach-killed", ".out");
        try {
            long before = mapped(hostA, "/memfd:vrdma-qp");
            Process server = example(hosts.socketA, out, "server", Integer.toString(port));
            awaitLine(server, out, "server: waiting for a client");
            // The host process maps the JVM's region and rings.
            assertThat(mapped(hostA, "/memfd:vrdma-buf")).isPositive();
            assertThat(mapped(hostA, "/memfd:vrdma-qp")).isEqualTo(before + 1);
            server.destroyForcibly(); // SIGKILL: no close, no shutdown hooks
            server.waitFor(10, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TIMEOUT_NS;
            while (mapped(hostA, "/memfd:vrdma-buf") + mapped(hostA, "/memfd:vrdma-cq") > 0
                    || mapped(hostA, "/memfd:vrdma-qp") > before) {
                assertThat(System.nanoTime())
                        .as("the host process still maps the killed JVM's memory")
                        .isLessThan(deadline);
                Thread.sleep(50);
            }
        } finally {
            Files.deleteIfExists(out);
        }
    }

    @Test
    void aJavaClientPingPongsWithTheUnmodifiedIbvRcPingpong() throws Exception {
        int iterations = 50;
        int size = 4096;
        int slots = 16;
        int port = HostProcesses.freeTcpPort(IP);
        Path out = Files.createTempFile("vrdma-attach-pingpong", ".out");
        ProcessBuilder pb = new ProcessBuilder(
                        "ibv_rc_pingpong",
                        "-d",
                        "vrdma0",
                        "-g",
                        "0",
                        "-n",
                        Integer.toString(iterations),
                        "-p",
                        Integer.toString(port))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile());
        pb.environment().put("LD_LIBRARY_PATH", NativeVerbsHosts.NATIVE_DIR.toString());
        pb.environment().put("VRDMA_SOCKET", hosts.socketA.toString());
        Process server = pb.start();
        children.add(server);
        try (Arena arena = Arena.ofShared();
                IbvContext ctx = IbvDeviceList.attach(hosts.socketB).open();
                IbvPd pd = ctx.allocPd();
                IbvCq cq = ctx.createCq(64, null);
                IbvMr send = pd.regMr(ctx.allocBuffer(size, arena), AccessFlags.LOCAL_WRITE);
                IbvMr recv = pd.regMr(ctx.allocBuffer((long) size * slots, arena), AccessFlags.LOCAL_WRITE);
                IbvQp qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, slots))) {
            IbvQpAttr a = new IbvQpAttr();
            a.qpState = QpState.INIT;
            a.portNum = 1;
            qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            IbvRecvWr rwr = new IbvRecvWr(1);
            for (int i = 0; i < slots; i++) {
                rwr.reset().addSge(recv, (long) i * size, size);
                rwr.wrId = i;
                qp.postRecv(rwr);
            }
            int psn = new Random(1).nextInt(1 << 24);
            String[] peer = exchange(server, out, port, qp.qpNum(), psn, ctx.queryGid(1, 0));
            // As ibv_rc_pingpong connects: RTR with the peer's GID, MTU 1024, then RTS.
            a.qpState = QpState.RTR;
            a.pathMtu = Mtu.MTU_1024;
            a.destQpNum = Integer.parseInt(peer[1], 16);
            a.rqPsn = Integer.parseInt(peer[2], 16);
            a.maxDestRdAtomic = 1;
            a.minRnrTimer = 12;
            a.ahAttr = IbvAhAttr.of(IbvGid.of(HexFormat.of().parseHex(peer[3])));
            qp.modify(
                    a,
                    QpAttrMask.STATE
                            | QpAttrMask.AV
                            | QpAttrMask.PATH_MTU
                            | QpAttrMask.DEST_QPN
                            | QpAttrMask.RQ_PSN
                            | QpAttrMask.MAX_DEST_RD_ATOMIC
                            | QpAttrMask.MIN_RNR_TIMER);
            a.qpState = QpState.RTS;
            a.timeout = 14;
            a.retryCnt = 7;
            a.rnrRetry = 7;
            a.sqPsn = psn;
            a.maxRdAtomic = 1;
            qp.modify(
                    a,
                    QpAttrMask.STATE
                            | QpAttrMask.TIMEOUT
                            | QpAttrMask.RETRY_CNT
                            | QpAttrMask.RNR_RETRY
                            | QpAttrMask.SQ_PSN
                            | QpAttrMask.MAX_QP_RD_ATOMIC);

            // Ping: a fresh pattern each time; pong: the server sends back the buffer it received.
            IbvSendWr swr = new IbvSendWr(1).addSge(send, 0, size);
            swr.opcode = WrOpcode.SEND;
            swr.sendFlags = SendFlags.SIGNALED;
            IbvWc[] wcs = IbvWc.array(4);
            byte[] pattern = new byte[size];
            for (int i = 0; i < iterations; i++) {
                new Random(i).nextBytes(pattern);
                MemorySegment.copy(pattern, 0, send.segment(), ValueLayout.JAVA_BYTE, 0, size);
                swr.wrId = 1000 + i;
                qp.postSend(swr);
                boolean sent = false;
                boolean received = false;
                long deadline = System.nanoTime() + TIMEOUT_NS;
                while (!(sent && received)) {
                    assertThat(System.nanoTime())
                            .as("iteration " + i + ": " + Files.readString(out))
                            .isLessThan(deadline);
                    int n = cq.poll(wcs);
                    if (n == 0) {
                        LockSupport.parkNanos(20_000);
                    }
                    for (int k = 0; k < n; k++) {
                        IbvWc wc = wcs[k];
                        assertThat(wc.status)
                                .as(wc + "\n" + Files.readString(out))
                                .isEqualTo(WcStatus.SUCCESS);
                        if (wc.opcode == WcOpcode.SEND) {
                            assertThat(wc.wrId).isEqualTo(1000 + i);
                            sent = true;
                        } else {
                            assertThat(wc.byteLen).isEqualTo(size);
                            int slot = (int) wc.wrId;
                            assertThat(recv.segment()
                                            .asSlice((long) slot * size, size)
                                            .toArray(ValueLayout.JAVA_BYTE))
                                    .as("pong " + i)
                                    .isEqualTo(pattern);
                            rwr.reset().addSge(recv, (long) slot * size, size);
                            rwr.wrId = slot;
                            qp.postRecv(rwr);
                            received = true;
                        }
                    }
                }
            }
            assertThat(HostProcesses.waitFor(server, 30, TimeUnit.SECONDS, "ibv_rc_pingpong"))
                    .as(Files.readString(out))
                    .isZero();
            System.out.println(
                    "ibv_rc_pingpong (server, host A) against the Java client on host B:\n" + Files.readString(out));
            assertThat(Files.readString(out))
                    .contains(iterations + " iters in")
                    .contains((long) size * iterations * 2 + " bytes in");
        } finally {
            server.destroyForcibly();
            Files.deleteIfExists(out);
        }
    }

    /**
     * ibv_rc_pingpong's client half of the exchange: our {@code lid:qpn:psn:gid} line (52 bytes with
     * its NUL), the server's line back, then {@code "done"}. Returns the server's four fields.
     */
    private static String[] exchange(Process server, Path out, int port, int qpn, int psn, IbvGid gid)
            throws Exception {
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(IP, port), 5_000);
                s.setSoTimeout(30_000);
                OutputStream o = s.getOutputStream();
                InputStream in = s.getInputStream();
                String line = String.format(
                        "%04x:%06x:%06x:%s", 0, qpn, psn, HexFormat.of().formatHex(gid.raw()));
                o.write((line + "\0").getBytes(StandardCharsets.US_ASCII));
                o.flush();
                byte[] msg = in.readNBytes(52);
                assertThat(msg).as(Files.readString(out)).hasSize(52);
                o.write("done\0".getBytes(StandardCharsets.US_ASCII));
                o.flush();
                String peer = new String(msg, 0, 51, StandardCharsets.US_ASCII);
                return peer.split(":");
            } catch (ConnectException e) {
                assertThat(server.isAlive()).as(Files.readString(out)).isTrue();
                assertThat(System.nanoTime())
                        .as("ibv_rc_pingpong never listened")
                        .isLessThan(deadline);
                Thread.sleep(50);
            }
        }
    }

    /** {@code VerbsExample args} in a child JVM attached to the host process on {@code socket}. */
    private Process example(Path socket, Path out, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(VrdmaJava.javaHome().resolve("bin").resolve("java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(String.join(
                java.io.File.pathSeparator,
                VrdmaJava.classPath().stream().map(Path::toString).toList()));
        cmd.add("org.vrdma.verbs.example.VerbsExample");
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("VRDMA_SOCKET", socket.toString());
        Process p = pb.start();
        children.add(p);
        return p;
    }

    private static void awaitLine(Process p, Path out, String prefix) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (!Files.readString(out).contains(prefix)) {
            assertThat(p.isAlive()).as(Files.readString(out)).isTrue();
            assertThat(System.nanoTime())
                    .as("no '" + prefix + "': " + Files.readString(out))
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** The host process serving {@code socket}: the one whose command line names it after "host". */
    private static long hostPid(Path socket) throws IOException {
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(d -> d.getFileName().toString().matches("\\d+"))
                    .toList()) {
                List<String> args;
                try {
                    args = List.of(Files.readString(p.resolve("cmdline")).split("\0"));
                } catch (IOException e) {
                    continue; // exited meanwhile
                }
                if (args.contains("host") && args.contains(socket.toString())) {
                    return Long.parseLong(p.getFileName().toString());
                }
            }
        }
        throw new AssertionError("no host process serves " + socket);
    }

    /** Mappings of process {@code pid} whose file is {@code name}. */
    private static long mapped(long pid, String name) throws IOException {
        try (var lines = Files.lines(Path.of("/proc", Long.toString(pid), "maps"))) {
            return lines.filter(l -> l.contains(name + " ")).count();
        }
    }
}
