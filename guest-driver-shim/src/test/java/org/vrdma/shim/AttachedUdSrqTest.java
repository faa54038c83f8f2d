package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.IbvAh;
import org.vrdma.verbs.IbvAhAttr;
import org.vrdma.verbs.IbvAsyncEvent;
import org.vrdma.verbs.IbvBusyException;
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
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvRecvWr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvSrq;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.AsyncEventType;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcFlags;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * UD queue pairs, address handles and shared receive queues of the Java verbs API attached to two
 * vNIC processes' control sockets (hosts 10.0.0.5 and 10.0.0.6, wired to each other): the same
 * protocol ops and rings as the native library, the same semantics as an embedded host (a 40-byte
 * GRH ahead of every UD payload, a Q_Key mismatch dropped at the receiver, typed EINVAL/ENOMEM/EBUSY
 * errors for the same bad requests).
 */
class AttachedUdSrqTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int BYTES = 64 * 1024;
    private static final int GRH_BYTES = 40;
    private static final int QKEY = 0x1111_2222;
    private static final int ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;

    private ShimFixture[] hosts;

    @BeforeEach
    void setUp() throws Exception {
        hosts = ShimFixture.pair();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (hosts != null) {
            for (final ShimFixture h : hosts) {
                h.close();
            }
        }
    }

    /** One application on one host: context, PD, CQ and a zero-copy region. */
    private static final class Side implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx;
        final IbvPd pd;
        final IbvCq cq;
        final IbvMr mr;

        Side(final ShimFixture host) {
            final IbvDevice d = IbvDeviceList.attach(host.server.socketPath());
            ctx = d.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(256, null);
            mr = pd.regMr(ctx.allocBuffer(BYTES, arena), ACCESS);
        }

        MemorySegment buf() {
            return mr.segment();
        }

        IbvQp ud(final int depth) {
            final IbvQp q = ctx.createQp(pd, IbvQpInitAttr.ud(cq, depth));
            QpConnector.udToRts(q, QKEY, QpInfo.of(q, mr));
            return q;
        }

        @Override
        public void close() {
            mr.close();
            pd.close();
            cq.close();
            ctx.close();
            arena.close();
        }
    }

    /** The next completion of {@code cq}, polling the shared ring. */
    private static IbvWc next(final IbvCq cq) {
        final IbvWc[] wcs = IbvWc.array(1);
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs) == 1) {
                return wcs[0];
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within " + WAIT);
    }

    private static IbvSendWr udSend(final Side from, final long offset, final int len, final IbvAh ah, final int qpn) {
        final IbvSendWr s = new IbvSendWr(1).addSge(from.mr, offset, len);
        s.opcode = WrOpcode.SEND;
        s.sendFlags = SendFlags.SIGNALED;
        s.ah = ah;
        s.remoteQpn = qpn;
        s.remoteQkey = QKEY;
        return s;
    }

    private static IbvRecvWr recv(final Side at, final long wrId, final long offset, final int len) {
        final IbvRecvWr r = new IbvRecvWr(1).addSge(at.mr, offset, len);
        r.wrId = wrId;
        return r;
    }

    /** The reply address of a UD receive: the IPv4 source in the GRH area (RoCE v2), as ibv_init_ah_from_wc reads it. */
    private static IbvGid sourceGid(final MemorySegment grh) {
        assertThat(grh.get(ValueLayout.JAVA_BYTE, 20) >> 4)
                .as("IPv4 header after 20 unused bytes")
                .isEqualTo(4);
        final int ip = Integer.reverseBytes(grh.get(ValueLayout.JAVA_INT_UNALIGNED, 32));
        return IbvGid.ofIpv4(ip);
    }

    @Test
    void udPingPongBetweenTwoHostsCarriesTheGrhAndEveryByte() {
        try (Side a = new Side(hosts[0]);
                Side b = new Side(hosts[1])) {
            final IbvQp qa = a.ud(64);
            final IbvQp qb = b.ud(64);
            assertThat(qa.type()).isEqualTo(QpType.UD);
            final Random rnd = new Random(11);
            final int[] sizes = {1, 23, 512, 1024, 4096};
            try (IbvAh toB = a.pd.createAh(IbvAhAttr.of(b.ctx.device().gid()))) {
                for (int round = 0; round < sizes.length; round++) {
                    final int len = sizes[round];
                    final byte[] ping = new byte[len];
                    rnd.nextBytes(ping);
                    MemorySegment.copy(ping, 0, a.buf(), ValueLayout.JAVA_BYTE, 0, len);
                    b.buf().asSlice(0, GRH_BYTES + 4096).fill((byte) 0);
                    qb.postRecv(recv(b, 100 + round, 0, GRH_BYTES + 4096));
                    final IbvSendWr s = udSend(a, 0, len, toB, qb.qpNum());
                    s.wrId = round;
                    s.opcode = WrOpcode.SEND_WITH_IMM;
                    s.immData = 0x5A00 + round;
                    qa.postSend(s);
                    final IbvWc sent = next(a.cq);
                    assertThat(sent.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(sent.opcode).isEqualTo(WcOpcode.SEND);
                    assertThat(sent.wrId).isEqualTo(round);

                    final IbvWc got = next(b.cq);
                    assertThat(got.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(got.opcode).isEqualTo(WcOpcode.RECV);
                    assertThat(got.wrId).isEqualTo(100 + round);
                    assertThat(got.byteLen).as("40-byte GRH + payload").isEqualTo(GRH_BYTES + len);
                    assertThat(got.wcFlags & WcFlags.GRH).isNotZero();
                    assertThat(got.wcFlags & WcFlags.WITH_IMM).isNotZero();
                    assertThat(got.immData).isEqualTo(0x5A00 + round);
                    assertThat(got.srcQp).isEqualTo(qa.qpNum());
                    assertThat(got.qpNum).isEqualTo(qb.qpNum());
                    assertThat(got.srcIpv4).isEqualTo(ShimFixture.ENI_IPV4);
                    assertThat(b.buf().asSlice(GRH_BYTES, len).toArray(ValueLayout.JAVA_BYTE))
                            .isEqualTo(ping);

                    // Pong: B answers the address the GRH names, with the payload it got, reversed.
                    final IbvGid back = sourceGid(b.buf().asSlice(0, GRH_BYTES));
                    assertThat(back).isEqualTo(a.ctx.device().gid());
                    final byte[] pong = ping.clone();
                    for (int i = 0; i < len / 2; i++) {
                        final byte t = pong[i];
                        pong[i] = pong[len - 1 - i];
                        pong[len - 1 - i] = t;
                    }
                    MemorySegment.copy(pong, 0, b.buf(), ValueLayout.JAVA_BYTE, 8192, len);
                    qa.postRecv(recv(a, 200 + round, 16384, GRH_BYTES + 4096));
                    try (IbvAh toA = b.pd.createAhFromWc(got, b.buf().asSlice(0, GRH_BYTES), 1)) {
                        assertThat(toA.dgid()).isEqualTo(back);
                        final IbvSendWr reply = udSend(b, 8192, len, toA, got.srcQp);
                        // Inline when it fits: the bytes are copied into the ring at post time.
                        reply.sendFlags |= len <= 64 ? SendFlags.INLINE : 0;
                        qb.postSend(reply);
                        assertThat(next(b.cq).status).isEqualTo(WcStatus.SUCCESS);
                    }
                    final IbvWc ret = next(a.cq);
                    assertThat(ret.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(ret.wrId).isEqualTo(200 + round);
                    assertThat(ret.byteLen).isEqualTo(GRH_BYTES + len);
                    assertThat(ret.srcQp).isEqualTo(qb.qpNum());
                    assertThat(ret.srcIpv4).isEqualTo(ShimFixture.ENI_IPV4 + 1);
                    assertThat(a.buf().asSlice(16384 + GRH_BYTES, len).toArray(ValueLayout.JAVA_BYTE))
                            .isEqualTo(pong);
                }
            }
            qa.close();
            qb.close();
        }
        assertThat(hosts[0].server.succeeded(ControlProtocol.CREATE_AH)).isEqualTo(1);
        assertThat(hosts[1].server.succeeded(ControlProtocol.CREATE_AH)).isEqualTo(5);
        assertThat(hosts[1].server.succeeded(ControlProtocol.DESTROY_AH)).isEqualTo(5);
        // Completions and posts never cross the control socket.
        assertThat(hosts[0].server.succeeded(ControlProtocol.POLL_CQ)).isZero();
    }

    @Test
    void badAddressHandlesAndQkeysFailAsOnAnEmbeddedHost() {
        try (Side a = new Side(hosts[0]);
                Side b = new Side(hosts[1])) {
            final IbvQp qa = a.ud(16);
            final IbvQp qb = b.ud(16);
            // Address vectors RoCE cannot route: the same EINVAL checks as on an embedded host.
            final IbvAhAttr notGlobal = IbvAhAttr.of(b.ctx.device().gid());
            notGlobal.isGlobal = false;
            final IbvAhAttr badIndex = IbvAhAttr.of(b.ctx.device().gid());
            badIndex.sgidIndex = 1;
            for (final IbvAhAttr bad : new IbvAhAttr[] {notGlobal, badIndex, IbvAhAttr.of(null)}) {
                assertThatThrownBy(() -> a.pd.createAh(bad))
                        .isInstanceOf(IbvInvalidArgumentException.class)
                        .satisfies(e -> assertThat(((IbvException) e).errno()).isEqualTo(Errno.EINVAL));
            }
            assertThat(hosts[0].server.succeeded(ControlProtocol.CREATE_AH)).isZero();

            final IbvAh toB = a.pd.createAh(IbvAhAttr.of(b.ctx.device().gid()));
            // No handle, a handle of another domain, an RDMA opcode, a message beyond the MTU.
            final IbvPd other = a.ctx.allocPd();
            final IbvAh foreign = other.createAh(IbvAhAttr.of(b.ctx.device().gid()));
            final IbvSendWr noAh = udSend(a, 0, 8, null, qb.qpNum());
            final IbvSendWr wrongPd = udSend(a, 0, 8, foreign, qb.qpNum());
            final IbvSendWr write = udSend(a, 0, 8, toB, qb.qpNum());
            write.opcode = WrOpcode.RDMA_WRITE;
            final IbvSendWr tooLong = udSend(a, 0, 8192, toB, qb.qpNum());
            for (final IbvSendWr bad : new IbvSendWr[] {noAh, wrongPd, write, tooLong}) {
                assertThatThrownBy(() -> qa.postSend(bad))
                        .isInstanceOf(IbvInvalidArgumentException.class)
                        .satisfies(e -> assertThat(((IbvException) e).errno()).isEqualTo(Errno.EINVAL));
            }
            assertThat(qa.outstandingSends()).as("nothing reached the ring").isZero();
            assertThatThrownBy(other::dealloc)
                    .as("a domain with an address handle is busy")
                    .isInstanceOf(IbvBusyException.class);
            foreign.destroy();
            assertThatThrownBy(foreign::destroy).isInstanceOf(IbvInvalidArgumentException.class);
            assertThatThrownBy(() -> qa.postSend(udSend(a, 0, 8, foreign, qb.qpNum())))
                    .as("a destroyed handle")
                    .isInstanceOf(IbvInvalidArgumentException.class);
            other.dealloc();

            // A Q_Key mismatch is dropped by the receiver: the sender completes, the one receive
            // posted is consumed by the next datagram with the right Q_Key, not by the bad one.
            qb.postRecv(recv(b, 7, 0, GRH_BYTES + 64));
            a.buf().asSlice(0, 16).fill((byte) 0x11);
            a.buf().asSlice(16, 16).fill((byte) 0x22);
            final IbvSendWr badKey = udSend(a, 0, 16, toB, qb.qpNum());
            badKey.remoteQkey = QKEY + 1;
            qa.postSend(badKey);
            assertThat(next(a.cq).status).isEqualTo(WcStatus.SUCCESS);
            final IbvSendWr wrongQpn = udSend(a, 0, 16, toB, qb.qpNum() + 1000);
            qa.postSend(wrongQpn);
            assertThat(next(a.cq).status)
                    .as("no such QP at the peer: dropped there")
                    .isEqualTo(WcStatus.SUCCESS);
            qa.postSend(udSend(a, 16, 16, toB, qb.qpNum()));
            assertThat(next(a.cq).status).isEqualTo(WcStatus.SUCCESS);
            final IbvWc got = next(b.cq);
            assertThat(got.status).isEqualTo(WcStatus.SUCCESS);
            assertThat(got.wrId).isEqualTo(7);
            assertThat(b.buf().asSlice(GRH_BYTES, 16).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0x22);
            toB.close();
            qa.close();
            qb.close();
        }
    }

    @Test
    void aSharedReceiveQueueFeedsTwoQpsAndKeepsItsLimits() throws Exception {
        try (Side a = new Side(hosts[0]);
                Side b = new Side(hosts[1])) {
            assertThatThrownBy(() -> b.ctx.createSrq(b.pd, b.ctx.queryDevice().maxSrqWr() + 1, 1, 0))
                    .isInstanceOf(IbvInvalidArgumentException.class);
            final IbvSrq srq = b.ctx.createSrq(b.pd, 4, 2, 0);
            assertThat(srq.maxWr()).isEqualTo(4);
            assertThat(srq.maxSge()).isEqualTo(2);
            final IbvQpInitAttr attr = IbvQpInitAttr.rc(b.cq, 16);
            attr.srq = srq;
            final IbvQp qb1 = b.ctx.createQp(b.pd, attr);
            final IbvQp qb2 = b.ctx.createQp(b.pd, attr);
            assertThat(qb1.srq()).isSameAs(srq);
            final IbvQp qa1 = a.ctx.createQp(a.pd, IbvQpInitAttr.rc(a.cq, 16));
            final IbvQp qa2 = a.ctx.createQp(a.pd, IbvQpInitAttr.rc(a.cq, 16));
            connect(a, qa1, b, qb1);
            connect(a, qa2, b, qb2);
            assertThatThrownBy(() -> qb1.postRecv(recv(b, 1, 0, 8)))
                    .as("a QP on an SRQ has no receive queue of its own")
                    .isInstanceOf(IbvInvalidArgumentException.class);

            // Four receives fill it; a fifth is ENOMEM, too many elements EINVAL.
            for (int i = 0; i < 4; i++) {
                srq.postRecv(recv(b, 500 + i, i * 1024L, 1024));
            }
            assertThatThrownBy(() -> srq.postRecv(recv(b, 504, 0, 8)))
                    .isInstanceOf(IbvNoMemoryException.class)
                    .satisfies(e -> assertThat(((IbvException) e).errno()).isEqualTo(Errno.ENOMEM));
            final IbvRecvWr three =
                    new IbvRecvWr(3).addSge(b.mr, 0, 8).addSge(b.mr, 0, 8).addSge(b.mr, 0, 8);
            assertThatThrownBy(() -> srq.postRecv(three)).isInstanceOf(IbvInvalidArgumentException.class);

            // The limit event: armed at 3, it fires once fewer than 3 receives are outstanding.
            srq.modifyLimit(3);
            assertThat(srq.limit()).isEqualTo(3);
            final Random rnd = new Random(3);
            final byte[][] sent = new byte[2][1000];
            for (int i = 0; i < 2; i++) {
                rnd.nextBytes(sent[i]);
                MemorySegment.copy(sent[i], 0, a.buf(), ValueLayout.JAVA_BYTE, i * 4096L, 1000);
                final IbvSendWr s = new IbvSendWr(1).addSge(a.mr, i * 4096L, 1000);
                s.wrId = i;
                s.sendFlags = SendFlags.SIGNALED;
                (i == 0 ? qa1 : qa2).postSend(s);
                assertThat(next(a.cq).status).isEqualTo(WcStatus.SUCCESS);
            }
            final Set<Integer> qps = new HashSet<>();
            final Set<Long> wrIds = new HashSet<>();
            for (int i = 0; i < 2; i++) {
                final IbvWc w = next(b.cq);
                assertThat(w.status).isEqualTo(WcStatus.SUCCESS);
                assertThat(w.opcode).isEqualTo(WcOpcode.RECV);
                assertThat(w.byteLen).isEqualTo(1000);
                qps.add(w.qpNum);
                wrIds.add(w.wrId);
                final int from = w.qpNum == qb1.qpNum() ? 0 : 1;
                final long at = (w.wrId - 500) * 1024;
                assertThat(b.buf().asSlice(at, 1000).toArray(ValueLayout.JAVA_BYTE))
                        .as("payload of QP %d in receive %d", w.qpNum, w.wrId)
                        .isEqualTo(sent[from]);
            }
            assertThat(qps).containsExactlyInAnyOrder(qb1.qpNum(), qb2.qpNum());
            assertThat(wrIds).as("receives consumed in posting order").containsExactlyInAnyOrder(500L, 501L);
            final IbvAsyncEvent e = b.ctx.getAsyncEvent(WAIT);
            assertThat(e).isNotNull();
            assertThat(e.type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
            assertThat(e.srq()).isSameAs(srq);
            assertThat(srq.limit()).as("the event disarms the limit").isZero();
            assertThatThrownBy(srq::destroy).as("unacknowledged event").isInstanceOf(IbvBusyException.class);
            e.ack();
            // Two slots free again: two more posts fit, a third does not.
            srq.postRecv(recv(b, 504, 4 * 1024L, 1024));
            srq.postRecv(recv(b, 505, 5 * 1024L, 1024));
            assertThatThrownBy(() -> srq.postRecv(recv(b, 506, 0, 8))).isInstanceOf(IbvNoMemoryException.class);

            assertThatThrownBy(srq::destroy).as("queue pairs still use it").isInstanceOf(IbvBusyException.class);
            assertThatThrownBy(b.ctx::close).isInstanceOf(IbvBusyException.class);
            qa1.close();
            qa2.close();
            qb1.close();
            qb2.close();
            srq.destroy();
            assertThatThrownBy(() -> srq.postRecv(recv(b, 9, 0, 8))).isInstanceOf(IbvInvalidArgumentException.class);
            srq.close(); // already destroyed: nothing
        }
        assertThat(hosts[1].server.succeeded(ControlProtocol.CREATE_SRQ)).isEqualTo(1);
        assertThat(hosts[1].server.succeeded(ControlProtocol.DESTROY_SRQ)).isEqualTo(1);
        ShimFixture.eventually(WAIT, () -> hosts[1].server.sessions().isEmpty(), "sessions released");
    }

    @Test
    void aUdQpOnASharedReceiveQueueGetsTheGrhInTheSrqsBuffers() {
        try (Side a = new Side(hosts[0]);
                Side b = new Side(hosts[1])) {
            final IbvQp qa = a.ud(16);
            final IbvSrq srq = b.ctx.createSrq(b.pd, 8, 1, 0);
            final IbvQpInitAttr attr = IbvQpInitAttr.ud(b.cq, 16);
            attr.srq = srq;
            final IbvQp qb = b.ctx.createQp(b.pd, attr);
            QpConnector.udToRts(qb, QKEY, QpInfo.of(qb, b.mr));
            for (int i = 0; i < 2; i++) {
                srq.postRecv(recv(b, 900 + i, i * 2048L, GRH_BYTES + 1024));
            }
            try (IbvAh toB = a.pd.createAh(IbvAhAttr.of(b.ctx.device().gid()))) {
                for (int i = 0; i < 2; i++) {
                    a.buf().asSlice(i * 1024L, 1000).fill((byte) (0x30 + i));
                    qa.postSend(udSend(a, i * 1024L, 1000, toB, qb.qpNum()));
                    assertThat(next(a.cq).status).isEqualTo(WcStatus.SUCCESS);
                    final IbvWc w = next(b.cq);
                    assertThat(w.status).isEqualTo(WcStatus.SUCCESS);
                    assertThat(w.wrId).isEqualTo(900 + i);
                    assertThat(w.qpNum).isEqualTo(qb.qpNum());
                    assertThat(w.byteLen).isEqualTo(GRH_BYTES + 1000);
                    assertThat(w.wcFlags & WcFlags.GRH).isNotZero();
                    assertThat(sourceGid(b.buf().asSlice(i * 2048L, GRH_BYTES)))
                            .isEqualTo(a.ctx.device().gid());
                    assertThat(b.buf().asSlice(i * 2048L + GRH_BYTES, 1000).toArray(ValueLayout.JAVA_BYTE))
                            .containsOnly((byte) (0x30 + i));
                }
            }
            qa.close();
            qb.close();
            srq.close();
        }
    }

    private static void connect(final Side a, final IbvQp qa, final Side b, final IbvQp qb) {
        final QpInfo ia = QpInfo.of(qa, a.mr);
        final QpInfo ib = QpInfo.of(qb, b.mr);
        QpConnector.rcToRts(qa, ia, ib);
        QpConnector.rcToRts(qb, ib, ia);
    }
}
