package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.IbvAsyncEvent;
import org.vrdma.verbs.IbvBusyException;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.IbvException;
import org.vrdma.verbs.IbvGid;
import org.vrdma.verbs.IbvInvalidArgumentException;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvNoMemoryException;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvPortAttr;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpAttr;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvRecvWr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.AsyncEventType;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.QpAttrMask;
import org.vrdma.vnic.verbs.QpState;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcFlags;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * The Java verbs API attached to a vNIC through its control socket, as to a {@code ./vrdma host}
 * process: two contexts (two applications) on a vNIC whose wire loops back connect RC QPs through
 * the shared rings, the vNIC reaches their memory (one zero-copy, one with {@code process_vm}),
 * bad arguments are typed exceptions, and a killed JVM's objects are released.
 */
class AttachedVerbsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BYTES = 64 * 1024;
    private static final int ACCESS =
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;

    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    AttachedVerbsTest() throws Exception {
        fx = new ShimFixture();
    }

    /** One application's objects: context, PD, channel, CQ, region, QP. */
    private static final class Side implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx;
        final IbvPd pd;
        final IbvCompChannel channel;
        final IbvCq cq;
        final IbvMr mr;
        final IbvQp qp;

        Side(final IbvDevice device, final boolean zeroCopy) {
            ctx = device.open();
            pd = ctx.allocPd();
            channel = ctx.createCompChannel();
            cq = ctx.createCq(64, channel);
            final MemorySegment buf = zeroCopy ? ctx.allocBuffer(BYTES, arena) : arena.allocate(BYTES, 4096);
            mr = pd.regMr(buf, ACCESS);
            qp = ctx.createQp(pd, IbvQpInitAttr.rc(cq, 32));
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

    private static void connect(final Side a, final Side b) {
        final QpInfo ia = QpInfo.of(a.qp, a.mr);
        final QpInfo ib = QpInfo.of(b.qp, b.mr);
        QpConnector.rcToRts(a.qp, ia, ib);
        QpConnector.rcToRts(b.qp, ib, ia);
    }

    /** The next completion: polls the ring, arming the CQ and sleeping on its channel when empty. */
    private static IbvWc await(final IbvCq cq, final IbvCompChannel channel) {
        final IbvWc[] wcs = IbvWc.array(1);
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            cq.reqNotify(false);
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            final IbvCq ev = channel.getCqEvent(Duration.ofMillis(500));
            if (ev != null) {
                assertThat(ev).isSameAs(cq);
                ev.ackEvents(1);
            }
        }
        throw new AssertionError("no completion within " + WAIT);
    }

    @Test
    void attachShowsTheVnicAndTheSocketPropertyListsIt() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        assertThat(d.isAttached()).isTrue();
        assertThat(d.name()).isEqualTo("vrdma0");
        assertThat(d.gid()).isEqualTo(IbvGid.parse("::ffff:10.0.0.5"));
        assertThat(d.guid()).isEqualTo(0x0000_0aff_fe00_0005L);
        assertThat(d.host()).isNull();
        final String before = System.getProperty(IbvDeviceList.SOCKET_PROPERTY);
        System.setProperty(IbvDeviceList.SOCKET_PROPERTY, fx.server.socketPath().toString());
        try {
            assertThat(IbvDeviceList.devices())
                    .anySatisfy(x -> assertThat(x.socket()).isEqualTo(fx.server.socketPath()));
            assertThat(IbvDeviceList.byName("vrdma0")).isNotNull();
            try (IbvContext ctx = IbvDeviceList.byName("vrdma0").open()) {
                assertThat(ctx.queryDevice().maxCqe()).isEqualTo(65536);
                assertThat(ctx.queryPort(1).activeMtu().bytes()).isEqualTo(4096);
                assertThat(ctx.queryGid(1, 0)).isEqualTo(d.gid());
            }
            System.setProperty(
                    IbvDeviceList.SOCKET_PROPERTY, fx.dir.resolve("nobody.sock").toString());
            assertThat(IbvDeviceList.devices()).noneMatch(IbvDevice::isAttached);
        } finally {
            if (before == null) {
                System.clearProperty(IbvDeviceList.SOCKET_PROPERTY);
            } else {
                System.setProperty(IbvDeviceList.SOCKET_PROPERTY, before);
            }
        }
        assertThatThrownBy(() -> IbvDeviceList.attach(fx.dir.resolve("nobody.sock")))
                .isInstanceOf(IbvException.class)
                .satisfies(e -> assertThat(((IbvException) e).errno()).isEqualTo(Errno.ENOENT));
    }

    @Test
    void writeSendAndReadMoveTheRightBytesThroughTheSharedRings() throws Exception {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        try (Side a = new Side(d, true);
                Side b = new Side(d, false)) {
            assertThat(a.mr.isZeroCopy()).isTrue();
            assertThat(b.mr.isZeroCopy()).isFalse();
            connect(a, b);
            assertThat(a.qp.query().qpState).isEqualTo(QpState.RTS);
            assertThat(a.qp.query().ahAttr.dgid).isEqualTo(d.gid());
            final byte[] pattern = new byte[BYTES];
            new Random(7).nextBytes(pattern);
            MemorySegment.copy(pattern, 0, a.buf(), ValueLayout.JAVA_BYTE, 0, BYTES);

            // RDMA WRITE with immediate: A's 64 KiB into B's region, consuming a receive at B.
            final IbvRecvWr recv = new IbvRecvWr(1);
            recv.wrId = 77;
            b.qp.postRecv(recv);
            final IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, BYTES);
            w.wrId = 1;
            w.opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
            w.sendFlags = SendFlags.SIGNALED;
            w.immData = 0xC0FFEE;
            w.remoteAddr = b.mr.addr();
            w.rkey = b.mr.rkey();
            a.qp.postSend(w);
            final IbvWc wa = await(a.cq, a.channel);
            assertThat(wa.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wa.opcode).isEqualTo(WcOpcode.RDMA_WRITE);
            assertThat(wa.wrId).isEqualTo(1);
            final IbvWc wb = await(b.cq, b.channel);
            assertThat(wb.opcode).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
            assertThat(wb.wrId).isEqualTo(77);
            assertThat(wb.immData).isEqualTo(0xC0FFEE);
            assertThat(wb.wcFlags & WcFlags.WITH_IMM).isNotZero();
            assertThat(wb.byteLen).isEqualTo(BYTES);
            assertThat(wb.solicited).isFalse();
            assertThat(wb.srcQp).as("the peer QP, as for an embedded context").isEqualTo(a.qp.qpNum());
            assertThat(wb.srcIpv4).isEqualTo(ShimFixture.ENI_IPV4);
            assertThat(b.buf().toArray(ValueLayout.JAVA_BYTE)).isEqualTo(pattern);

            // SEND of two elements (one inline-copied) into a receive of two elements at A.
            final IbvRecvWr r2 = new IbvRecvWr(2).addSge(a.mr, 1000, 100).addSge(a.mr, 5000, 200);
            r2.wrId = 78;
            a.qp.postRecv(r2);
            b.buf().asSlice(300, 300).fill((byte) 0x5A);
            final IbvSendWr s = new IbvSendWr(2).addSge(b.mr, 300, 150).addSge(b.mr, 450, 150);
            s.wrId = 2;
            s.opcode = WrOpcode.SEND;
            s.sendFlags = SendFlags.SIGNALED | SendFlags.SOLICITED;
            b.qp.postSend(s);
            assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.SUCCESS);
            final IbvWc ws = await(a.cq, a.channel);
            assertThat(ws.opcode).isEqualTo(WcOpcode.RECV);
            assertThat(ws.byteLen).isEqualTo(300);
            assertThat(ws.solicited).as("the SEND asked for a solicited event").isTrue();
            assertThat(ws.srcQp).isEqualTo(b.qp.qpNum());
            assertThat(ws.srcIpv4).isEqualTo(ShimFixture.ENI_IPV4);
            assertThat(a.buf().asSlice(1000, 100).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x5A);
            assertThat(a.buf().asSlice(5000, 200).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x5A);
            assertThat(a.buf().get(ValueLayout.JAVA_BYTE, 1100)).isEqualTo(pattern[1100]);

            // Inline SEND: the bytes are copied at post time.
            final IbvRecvWr r3 = new IbvRecvWr(1).addSge(a.mr, 20000, 64);
            r3.wrId = 79;
            a.qp.postRecv(r3);
            b.buf().asSlice(0, 32).fill((byte) 0x11);
            final IbvSendWr in = new IbvSendWr(1).addSge(b.mr, 0, 32);
            in.opcode = WrOpcode.SEND;
            in.sendFlags = SendFlags.SIGNALED | SendFlags.INLINE;
            b.qp.postSend(in);
            b.buf().asSlice(0, 32).fill((byte) 0x22); // too late to change what was sent
            assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(await(a.cq, a.channel).byteLen).isEqualTo(32);
            assertThat(a.buf().asSlice(20000, 32).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x11);

            // RDMA READ: B reads 2000 bytes of A's region back.
            final IbvSendWr rd = new IbvSendWr(1).addSge(b.mr, 40000, 2000);
            rd.wrId = 3;
            rd.opcode = WrOpcode.RDMA_READ;
            rd.sendFlags = SendFlags.SIGNALED;
            rd.remoteAddr = a.mr.addr() + 30000;
            rd.rkey = a.mr.rkey();
            b.qp.postSend(rd);
            final IbvWc wr = await(b.cq, b.channel);
            assertThat(wr.opcode).isEqualTo(WcOpcode.RDMA_READ);
            assertThat(wr.byteLen).isEqualTo(2000);
            assertThat(b.buf().asSlice(40000, 2000).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(a.buf().asSlice(30000, 2000).toArray(ValueLayout.JAVA_BYTE));

            // FETCH_ADD on A's memory.
            a.buf().set(ValueLayout.JAVA_LONG_UNALIGNED, 8, 40L);
            final IbvSendWr fa = new IbvSendWr(1).addSge(b.mr, 48, 8);
            fa.opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
            fa.sendFlags = SendFlags.SIGNALED;
            fa.remoteAddr = a.mr.addr() + 8;
            fa.rkey = a.mr.rkey();
            fa.compareAdd = 5;
            b.qp.postSend(fa);
            assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.SUCCESS);
            assertThat(b.buf().get(ValueLayout.JAVA_LONG_UNALIGNED, 48)).isEqualTo(40L);
            assertThat(a.buf().get(ValueLayout.JAVA_LONG_UNALIGNED, 8)).isEqualTo(45L);
        }
        // Completions came through the rings, never through POLL_CQ; one region of each kind.
        assertThat(fx.server.succeeded(ControlProtocol.POLL_CQ)).isZero();
        assertThat(fx.server.succeeded(ControlProtocol.CREATE_QP)).isEqualTo(2);
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_QP)).isEqualTo(2);
        assertThat(fx.server.memoryStats()).satisfies(m -> {
            assertThat(m.zeroCopyRegions()).isEqualTo(1);
            assertThat(m.copyRegions()).isEqualTo(1);
        });
        // The server releases a session when it reads the closed connection's end: not synchronously.
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "both sessions released");
    }

    @Test
    void badArgumentsAreTypedExceptionsAndBadKeysErrorCompletions() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        try (Side a = new Side(d, true);
                Side b = new Side(d, true)) {
            final IbvContext ctx = a.ctx;
            assertThatThrownBy(() -> ctx.createCq(0, null)).isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> ctx.queryPort(2)).isInstanceOf(IbvInvalidArgumentException.class);
            final IbvQpInitAttr huge = IbvQpInitAttr.rc(a.cq, 1 << 20);
            assertThatThrownBy(() -> ctx.createQp(a.pd, huge)).isInstanceOf(IbvInvalidArgumentException.class);
            // Shared receive queues: another context's PD, a limit above max_wr, sizes beyond the device.
            assertThatThrownBy(() -> ctx.createSrq(b.pd, 16, 1, 0)).isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> ctx.createSrq(a.pd, 16, 1, 17)).isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> ctx.createSrq(a.pd, 16, 1 << 20, 0))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> b.pd.regMr(MemorySegment.ofArray(new byte[16]), ACCESS))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            // Objects of another context.
            assertThatThrownBy(() -> ctx.createQp(b.pd, IbvQpInitAttr.rc(a.cq, 8)))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            // Posting before RTS; a transition the specification does not allow (the vNIC says EINVAL).
            final IbvSendWr s = new IbvSendWr(1).addSge(a.mr, 0, 8);
            assertThatThrownBy(() -> a.qp.postSend(s)).isInstanceOf(IbvInvalidArgumentException.class);
            final IbvQpAttr rts = new IbvQpAttr();
            rts.qpState = QpState.RTS;
            assertThatThrownBy(() -> a.qp.modify(rts, QpAttrMask.STATE))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            // In use: a PD with a region, a context with objects.
            assertThatThrownBy(() -> a.pd.dealloc()).isInstanceOf(IbvBusyException.class);
            assertThatThrownBy(ctx::close).isInstanceOf(IbvBusyException.class);
            final IbvRecvWr tooMany = new IbvRecvWr(8);
            for (int i = 0; i < 8; i++) {
                tooMany.addSge(a.mr, i, 1);
            }
            assertThatThrownBy(() -> a.qp.postRecv(tooMany)).isInstanceOf(IbvInvalidArgumentException.class);

            connect(a, b);
            // A bad rkey at the peer: REM_ACCESS_ERR, the peer's memory untouched.
            b.buf().fill((byte) 3);
            final IbvSendWr badR = new IbvSendWr(1).addSge(b.mr, 0, 64);
            badR.wrId = 10;
            badR.opcode = WrOpcode.RDMA_READ;
            badR.sendFlags = SendFlags.SIGNALED;
            badR.remoteAddr = a.mr.addr();
            badR.rkey = a.mr.rkey() ^ 0x100;
            b.qp.postSend(badR);
            assertThat(await(b.cq, b.channel).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(b.buf().toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 3);

            // A bad lkey (a pair of its own: the NAK above moved both QPs to ERR) is an error
            // completion, and the QP enters ERR.
            try (Side x = new Side(d, true);
                    Side y = new Side(d, true)) {
                connect(x, y);
                final IbvSendWr bad = new IbvSendWr(1).addSge(x.mr.addr(), 8, x.mr.lkey() ^ 0x100);
                bad.wrId = 9;
                bad.opcode = WrOpcode.RDMA_WRITE;
                bad.sendFlags = SendFlags.SIGNALED;
                bad.remoteAddr = y.mr.addr();
                bad.rkey = y.mr.rkey();
                x.qp.postSend(bad);
                final IbvWc wc = await(x.cq, x.channel);
                assertThat(wc.wrId).isEqualTo(9);
                assertThat(wc.status).isEqualTo(WcStatus.LOC_PROT_ERR);
                assertThat(x.qp.query().qpState).isEqualTo(QpState.ERR);
            }
            // Any state may move to ERR.
            try (IbvQp small = ctx.createQp(a.pd, IbvQpInitAttr.rc(a.cq, 2))) {
                final IbvQpAttr err = new IbvQpAttr();
                err.qpState = QpState.ERR;
                small.modify(err, QpAttrMask.STATE);
                assertThat(small.query().qpState).isEqualTo(QpState.ERR);
                assertThat(small.state()).isEqualTo(QpState.ERR);
            }
            a.mr.dereg();
            assertThatThrownBy(a.mr::dereg).isInstanceOf(IbvInvalidArgumentException.class);
        }
    }

    @Test
    void aFullSendRingIsNoMemory() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        try (Side a = new Side(d, true);
                Side b = new Side(d, true)) {
            connect(a, b);
            // The vNIC takes requests into its queue on a doorbell; hold its device thread so that
            // the ring fills: 32 slots, then ENOMEM.
            final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            fx.loop.execute(() -> {
                try {
                    release.await();
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            final IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, 8);
            w.opcode = WrOpcode.RDMA_WRITE;
            w.remoteAddr = b.mr.addr();
            w.rkey = b.mr.rkey();
            int posted = 0;
            try {
                for (; posted < 33; posted++) {
                    w.wrId = posted;
                    w.sendFlags = posted % 8 == 7 ? SendFlags.SIGNALED : 0;
                    a.qp.postSend(w);
                }
            } catch (final IbvNoMemoryException e) {
                assertThat(e.errno()).isEqualTo(Errno.ENOMEM);
            } finally {
                release.countDown();
            }
            assertThat(posted).isEqualTo(32);
            int signaled = 0;
            while (signaled < 4) {
                final IbvWc wc = await(a.cq, a.channel);
                assertThat(wc.status).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.wrId).isEqualTo(8L * signaled + 7);
                signaled++;
            }
        }
    }

    @Test
    void aKilledJvmsQueuePairsAndRegionsAreReleased() throws Exception {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(AttachedClientProcess.class.getName());
        cmd.add(fx.server.socketPath().toString());
        final ShimFixture.Program p = fx.start(cmd);
        p.await("READY", WAIT);
        final List<VnicControlServer.SessionView> sessions = fx.server.sessions();
        assertThat(sessions).hasSize(1);
        assertThat(sessions.get(0).pid()).isEqualTo((int) p.process.pid());
        assertThat(sessions.get(0).queuePairs()).isEqualTo(1);
        assertThat(sessions.get(0).memoryRegions()).hasSize(1);
        assertThat(mapped("/memfd:vrdma-buf")).isEqualTo(1);
        assertThat(mapped("/memfd:vrdma-qp")).isEqualTo(1);

        p.process.destroyForcibly(); // SIGKILL: no close, no exit hooks
        p.process.waitFor();
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "the killed JVM's session released");
        assertThat(mapped("/memfd:vrdma-buf")).isZero();
        assertThat(mapped("/memfd:vrdma-qp")).isZero();
        assertThat(mapped("/memfd:vrdma-cq")).isZero();
    }

    /** Mappings of this JVM (the vNIC) whose file is {@code name}. */
    private static long mapped(final String name) throws IOException {
        try (var lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.contains(name + " ")).count();
        }
    }

    @Test
    void asyncEventsNameTheQpAndThePortAndHoldBackDestroyUntilAcknowledged() throws Exception {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        try (Side a = new Side(d, true);
                Side b = new Side(d, true)) {
            assertThat(a.ctx.pollAsyncEvent()).as("quiet").isNull();
            connect(a, b);
            // A WRITE with a wrong rkey: B's responder fails the request and B's QP reports it.
            final IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, 64);
            w.opcode = WrOpcode.RDMA_WRITE;
            w.sendFlags = SendFlags.SIGNALED;
            w.remoteAddr = b.mr.addr();
            w.rkey = b.mr.rkey() ^ 0x5a5a00;
            a.qp.postSend(w);
            assertThat(await(a.cq, a.channel).status).isEqualTo(WcStatus.REM_ACCESS_ERR);
            final IbvAsyncEvent e = b.ctx.getAsyncEvent(WAIT);
            assertThat(e).isNotNull();
            assertThat(e.type()).isEqualTo(AsyncEventType.QP_ACCESS_ERR);
            assertThat(e.qp()).isSameAs(b.qp);
            assertThat(a.ctx.pollAsyncEvent())
                    .as("the requester learns from its completion")
                    .isNull();
            assertThatThrownBy(b.qp::destroy).isInstanceOf(IbvBusyException.class);
            e.ack();
            assertThatThrownBy(e::ack).isInstanceOf(IbvInvalidArgumentException.class);

            // The vNIC's link goes down and up: every context hears it, query_port follows.
            assertThat(a.ctx.queryPort(1).state()).isEqualTo(IbvPortAttr.State.ACTIVE);
            fx.loop.submit(() -> fx.device.portActive(false)).get();
            final IbvAsyncEvent down = a.ctx.getAsyncEvent(WAIT);
            assertThat(down.type()).isEqualTo(AsyncEventType.PORT_ERR);
            assertThat(down.portNum()).isEqualTo(1);
            assertThat(a.ctx.queryPort(1).state()).isEqualTo(IbvPortAttr.State.DOWN);
            assertThat(b.ctx.getAsyncEvent(WAIT).type()).isEqualTo(AsyncEventType.PORT_ERR);
            fx.loop.submit(() -> fx.device.portActive(true)).get();
            assertThat(a.ctx.getAsyncEvent(WAIT).type()).isEqualTo(AsyncEventType.PORT_ACTIVE);
            assertThat(a.ctx.queryPort(1).state()).isEqualTo(IbvPortAttr.State.ACTIVE);
            down.ack();
        }
    }

    @Test
    void ucQueuePairsWriteAndSendAndRefuseReads() throws Exception {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        try (Side a = new Side(d, true);
                Side b = new Side(d, true);
                IbvQp ua = a.ctx.createQp(a.pd, IbvQpInitAttr.uc(a.cq, 16));
                IbvQp ub = b.ctx.createQp(b.pd, IbvQpInitAttr.uc(b.cq, 16))) {
            assertThat(ua.type()).isEqualTo(QpType.UC);
            final QpInfo ia = QpInfo.of(ua, a.mr);
            final QpInfo ib = QpInfo.of(ub, b.mr);
            QpConnector.ucToRts(ua, ia, ib);
            QpConnector.ucToRts(ub, ib, ia);
            assertThat(ua.query().qpState).isEqualTo(QpState.RTS);
            a.buf().asSlice(0, 10000).fill((byte) 0x3C);
            final IbvRecvWr r = new IbvRecvWr(1).addSge(b.mr, 20000, 8192);
            r.wrId = 5;
            ub.postRecv(r);
            final IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, 10000);
            w.opcode = WrOpcode.RDMA_WRITE;
            w.sendFlags = SendFlags.SIGNALED;
            w.remoteAddr = b.mr.addr() + 100;
            w.rkey = b.mr.rkey();
            ua.postSend(w);
            assertThat(await(a.cq, a.channel).opcode).isEqualTo(WcOpcode.RDMA_WRITE);
            final IbvSendWr s = new IbvSendWr(1).addSge(a.mr, 0, 5000);
            s.opcode = WrOpcode.SEND_WITH_IMM;
            s.immData = 42;
            s.sendFlags = SendFlags.SIGNALED | SendFlags.SOLICITED;
            ua.postSend(s);
            assertThat(await(a.cq, a.channel).status).isEqualTo(WcStatus.SUCCESS);
            final IbvWc got = await(b.cq, b.channel);
            assertThat(got.opcode).isEqualTo(WcOpcode.RECV);
            assertThat(got.byteLen).isEqualTo(5000);
            assertThat(got.immData).isEqualTo(42);
            assertThat(got.solicited).isTrue();
            assertThat(got.srcQp).isEqualTo(ua.qpNum());
            assertThat(b.buf().asSlice(100, 10000).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x3C);
            assertThat(b.buf().asSlice(20000, 5000).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x3C);
            final IbvSendWr rd = new IbvSendWr(1).addSge(a.mr, 0, 8);
            rd.opcode = WrOpcode.RDMA_READ;
            rd.remoteAddr = b.mr.addr();
            rd.rkey = b.mr.rkey();
            assertThatThrownBy(() -> ua.postSend(rd)).isInstanceOf(IbvInvalidArgumentException.class);
        }
    }
}
