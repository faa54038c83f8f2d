package org.vrdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;

/** One side of a test: a context, PD, channel, CQ, one registered buffer and its QPs. */
final class Peer implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(10);
    static final int ALL_ACCESS =
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;

    /**
     * Host options for tests: retransmission timeouts from 10 ms, so that a loaded machine and the
     * tests' paranoid buffer-leak tracking (which slows every buffer access) do not exhaust retries.
     */
    static VerbsHost.Options hostOptions(String name, String eniIpv4) {
        return VerbsHost.Options.loopback(name, eniIpv4)
                .withTransport(
                        org.vrdma.vnic.transport.TransportConfig.defaults().withRto(10_000_000, 20_000_000));
    }

    /** ACK timeout code of test QPs: 4.096 µs · 2^16 ≈ 268 ms ceiling for the adaptive timeout. */
    static final int QP_TIMEOUT = 16;

    final VerbsHost host;
    final Arena arena = Arena.ofShared();
    final IbvContext ctx;
    final IbvPd pd;
    final IbvCompChannel channel;
    final IbvCq cq;
    final IbvMr mr;
    final MemorySegment buf;
    private final IbvWc[] one = IbvWc.array(1);

    Peer(VerbsHost host, int bytes) {
        this.host = host;
        this.ctx = host.device().open();
        this.pd = ctx.allocPd();
        this.channel = ctx.createCompChannel();
        this.cq = ctx.createCq(1024, channel);
        this.buf = arena.allocate(bytes, 4096);
        this.mr = pd.regMr(buf, ALL_ACCESS);
    }

    private final java.util.List<IbvQp> qps = new java.util.ArrayList<>();

    IbvQp rcQp(int depth) {
        return qp(IbvQpInitAttr.rc(cq, depth));
    }

    IbvQp qp(IbvQpInitAttr attr) {
        IbvQp q = ctx.createQp(pd, attr);
        qps.add(q);
        return q;
    }

    /** The next completion of this side's CQ, waiting on the channel; fails after the timeout. */
    IbvWc next() {
        return next(TIMEOUT);
    }

    /** The next completion, waiting at most {@code timeout} for each channel event. */
    IbvWc next(Duration timeout) {
        while (true) {
            if (cq.poll(one) == 1) {
                return copy(one[0]);
            }
            cq.reqNotify(false);
            if (cq.poll(one) == 1) {
                return copy(one[0]);
            }
            IbvCq ev = channel.getCqEvent(timeout);
            if (ev == null) {
                throw new AssertionError("no completion within " + timeout);
            }
            ev.ackEvents(1);
        }
    }

    private static IbvWc copy(IbvWc wc) {
        IbvWc c = new IbvWc();
        c.copyFrom(wc);
        return c;
    }

    /** Connects {@code a} (of {@code pa}) and {@code b} (of {@code pb}) as an RC pair. */
    static void connect(Peer pa, IbvQp a, Peer pb, IbvQp b) {
        QpInfo ia = QpInfo.of(a, pa.mr);
        QpInfo ib = QpInfo.of(b, pb.mr);
        QpConnector.rcToRts(a, ia, ib, QP_TIMEOUT);
        QpConnector.rcToRts(b, ib, ia, QP_TIMEOUT);
    }

    /** A UD QP of each peer in RTS, each host with a route to the other's; their addresses. */
    record UdPair(IbvQp a, IbvQp b, QpInfo ia, QpInfo ib) {}

    /** Two UD QPs, {@code pa}'s and {@code pb}'s (16 WRs each way), in RTS with Q_Key {@code qkey}. */
    static UdPair connectUd(Peer pa, Peer pb, int qkey) {
        IbvQp a = pa.qp(IbvQpInitAttr.ud(pa.cq, 16));
        IbvQp b = pb.qp(IbvQpInitAttr.ud(pb.cq, 16));
        QpInfo ia = QpInfo.of(a, pa.mr);
        QpInfo ib = QpInfo.of(b, pb.mr);
        QpConnector.udToRts(a, qkey, ia);
        QpConnector.udToRts(b, qkey, ib);
        QpConnector.addRoute(pa.ctx, ib);
        QpConnector.addRoute(pb.ctx, ia);
        return new UdPair(a, b, ia, ib);
    }

    /** A signaled UD SEND of {@code len} bytes of this peer's region at {@code offset} to QP {@code qpn} through {@code ah}. */
    IbvSendWr udSend(IbvAh ah, int qpn, int qkey, long offset, int len) {
        IbvSendWr s = new IbvSendWr(1).addSge(mr, offset, len);
        s.sendFlags = SendFlags.SIGNALED;
        s.ah = ah;
        s.remoteQpn = qpn;
        s.remoteQkey = qkey;
        return s;
    }

    @Override
    public void close() {
        for (IbvQp q : qps) {
            q.close();
        }
        mr.close();
        cq.close();
        channel.close();
        pd.close();
        ctx.close();
        arena.close();
    }
}
