package org.vrdma.harness.perf;

import java.lang.foreign.Arena;
import java.time.Duration;
import org.HdrHistogram.Histogram;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvRecvWr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.verbs.VerbsHost;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * Workloads written against the Java verbs API, as a JVM application would: two embedded hosts
 * (real UDP on 127.0.0.1), application threads that post and poll, completion channels for idle
 * waits. RDMA WRITE bandwidth with a window of outstanding requests, and a SEND ping-pong.
 */
public final class VerbsApiBench implements AutoCloseable {
    /** Bandwidth result. */
    public record Bandwidth(long bytes, long elapsedNs, long writes) {
        public double gbps() {
            return bytes * 8.0 / elapsedNs;
        }
    }

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int BUFFER_BYTES = 2 << 20;

    private final VerbsHost hostA;
    private final VerbsHost hostB;
    private final Side a;
    private final Side b;

    /** Starts two hosts with {@code transport} and connects one RC QP pair of {@code depth}. */
    public VerbsApiBench(TransportConfig transport, int depth) {
        hostA = VerbsHost.start(
                VerbsHost.Options.loopback("bench-a", "10.0.0.1").withTransport(transport));
        hostB = VerbsHost.start(
                VerbsHost.Options.loopback("bench-b", "10.0.0.2").withTransport(transport));
        a = new Side(hostA.device(), depth);
        b = new Side(hostB.device(), depth);
        connect();
    }

    /**
     * Attaches to the devices of two vNIC processes ({@code ./vrdma host --verbs-socket}, routed to
     * each other) and connects one RC QP pair of {@code depth}.
     */
    public VerbsApiBench(IbvDevice deviceA, IbvDevice deviceB, int depth) {
        hostA = null;
        hostB = null;
        a = new Side(deviceA, depth);
        b = new Side(deviceB, depth);
        connect();
    }

    private void connect() {
        QpInfo ia = QpInfo.of(a.qp, a.mr);
        QpInfo ib = QpInfo.of(b.qp, b.mr);
        QpConnector.rcToRts(a.qp, ia, ib);
        QpConnector.rcToRts(b.qp, ib, ia);
    }

    public String describe() {
        if (hostA == null) {
            return "Java verbs API attached to 2 vNIC processes, "
                    + a.ctx.device().socket() + " <-> " + b.ctx.device().socket()
                    + "; application threads post and poll, channels for idle waits";
        }
        return "Java verbs API: 2 VerbsHosts in this JVM, " + hostA.underlayAddress() + " <-> "
                + hostB.underlayAddress() + "; application threads post and poll, channels for idle waits";
    }

    /** RDMA WRITEs of {@code size} bytes, {@code depth} outstanding, every 8th signaled. */
    public Bandwidth writeBandwidth(int size, int depth, long durationNs) {
        IbvSendWr w = new IbvSendWr(1).addSge(a.mr, 0, size);
        w.opcode = WrOpcode.RDMA_WRITE;
        w.remoteAddr = b.mr.addr();
        w.rkey = b.mr.rkey();
        int signalEvery = Math.max(1, Math.min(8, depth / 2));
        long posted = 0;
        long completed = 0;
        boolean lastSignaled = true;
        long start = System.nanoTime();
        long end = start + durationNs;
        while (true) {
            boolean stop = System.nanoTime() - end >= 0;
            if (stop && lastSignaled && completed == posted) {
                break;
            }
            if (posted - completed < depth && (!stop || !lastSignaled)) {
                // After the deadline, one signaled request covers the unsignaled ones before it.
                boolean signaled = stop || posted % signalEvery == signalEvery - 1;
                w.wrId = posted;
                w.sendFlags = signaled ? SendFlags.SIGNALED : 0;
                a.qp.postSend(w);
                posted++;
                lastSignaled = signaled;
                continue;
            }
            IbvWc wc = a.next();
            if (wc.status != WcStatus.SUCCESS) {
                throw new IllegalStateException("WRITE failed: " + wc);
            }
            completed = wc.wrId + 1;
        }
        long elapsed = System.nanoTime() - start;
        return new Bandwidth(posted * size, elapsed, posted);
    }

    /** A SEND ping-pong of {@code size} bytes: half round trips in a histogram (ns). */
    public Histogram sendLatency(int size, long warmup, long durationNs, long maxIterations) throws Exception {
        Histogram h = new Histogram(3);
        Thread server = Thread.ofPlatform().name("verbs-bench-server").start(() -> b.echo(size));
        try {
            IbvSendWr s = new IbvSendWr(1).addSge(a.mr, 0, size);
            s.opcode = WrOpcode.SEND;
            s.sendFlags = SendFlags.SIGNALED;
            IbvRecvWr r = new IbvRecvWr(1).addSge(a.mr, 4096, size);
            long end = System.nanoTime() + durationNs;
            for (long i = 0; i < warmup + maxIterations; i++) {
                if (i >= warmup && System.nanoTime() - end >= 0) {
                    break;
                }
                a.qp.postRecv(r);
                long t0 = System.nanoTime();
                a.qp.postSend(s);
                int got = 0;
                while (got < 2) {
                    IbvWc wc = a.next();
                    if (wc.status != WcStatus.SUCCESS) {
                        throw new IllegalStateException("ping failed: " + wc);
                    }
                    got++;
                }
                if (i >= warmup) {
                    h.recordValue((System.nanoTime() - t0) / 2);
                }
            }
        } finally {
            // A zero-length SEND tells the server to stop.
            IbvSendWr stop = new IbvSendWr(1);
            stop.opcode = WrOpcode.SEND;
            stop.sendFlags = SendFlags.SIGNALED;
            a.qp.postSend(stop);
            a.next();
            server.join(WAIT.toMillis());
        }
        return h;
    }

    @Override
    public void close() {
        try {
            a.close();
            b.close();
        } finally {
            if (hostA != null) {
                hostA.close();
                hostB.close();
            }
        }
    }

    /** One host's context, PD, channel, CQ, buffer and QP; used by one thread at a time. */
    private static final class Side implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final IbvContext ctx;
        final IbvPd pd;
        final IbvCompChannel channel;
        final IbvCq cq;
        final IbvMr mr;
        final IbvQp qp;
        private final IbvWc[] wcs = IbvWc.array(1);

        Side(IbvDevice device, int depth) {
            ctx = device.open();
            pd = ctx.allocPd();
            channel = ctx.createCompChannel();
            cq = ctx.createCq(4 * depth + 16, channel);
            mr = pd.regMr(ctx.allocBuffer(BUFFER_BYTES, arena), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            IbvQpInitAttr attr = IbvQpInitAttr.rc(cq, depth + 1);
            qp = ctx.createQp(pd, attr);
        }

        /** The next completion: a short spin on the ring, then sleep on the channel. */
        IbvWc next() {
            for (int spin = 0; spin < 200; spin++) {
                if (cq.poll(wcs) == 1) {
                    return wcs[0];
                }
                Thread.onSpinWait();
            }
            while (true) {
                cq.reqNotify(false);
                if (cq.poll(wcs) == 1) {
                    return wcs[0];
                }
                IbvCq ev = channel.getCqEvent(WAIT);
                if (ev == null) {
                    throw new IllegalStateException("no completion within " + WAIT);
                }
                ev.ackEvents(1);
                if (cq.poll(wcs) == 1) {
                    return wcs[0];
                }
            }
        }

        /** Echoes every SEND back until a zero-length one arrives. */
        void echo(int size) {
            IbvRecvWr r = new IbvRecvWr(1).addSge(mr, 0, size);
            IbvSendWr s = new IbvSendWr(1).addSge(mr, 0, size);
            s.opcode = WrOpcode.SEND;
            qp.postRecv(r);
            while (true) {
                IbvWc wc = next();
                if (wc.status != WcStatus.SUCCESS) {
                    return;
                }
                if (wc.opcode != org.vrdma.vnic.verbs.WcOpcode.RECV) {
                    continue;
                }
                if (wc.byteLen == 0) {
                    return;
                }
                qp.postRecv(r);
                // Unsignaled replies; every 16th is signaled so the send queue frees.
                s.sendFlags = (s.wrId++ % 16 == 15) ? SendFlags.SIGNALED : 0;
                qp.postSend(s);
            }
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
}
