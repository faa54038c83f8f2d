package org.vrdma.vnic.verbs;

import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.runtime.LinkModel;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Two hosts, each with a device, joined by a modelled link in each direction, in virtual time.
 * Each host has one PD, one CQ and one registered memory region of {@link #MEMORY_BYTES} at {@link
 * #BASE}.
 */
final class Fabric implements AutoCloseable {
    static final long BASE = 0x1000_0000L;
    static final int MEMORY_BYTES = 8 << 20;
    static final int IP_A = 0x0A000001;
    static final int IP_B = 0x0A000002;

    final VirtualTimeScheduler scheduler;
    final Host a;
    final Host b;
    final LinkModel ab;
    final LinkModel ba;
    private final List<QueuePair> qps = new ArrayList<>();
    private final List<SharedReceiveQueue> srqs = new ArrayList<>();
    private boolean markCe;
    private java.util.function.Consumer<io.netty.buffer.ByteBuf> tapAtoB = frame -> {};
    private java.util.function.Predicate<io.netty.buffer.ByteBuf> dropAtoB = frame -> false;
    private java.util.function.Predicate<io.netty.buffer.ByteBuf> dropBtoA = frame -> false;

    /** Drops every frame from A to B that {@code drop} picks (it must not keep the frame). */
    void dropAtoB(final java.util.function.Predicate<io.netty.buffer.ByteBuf> drop) {
        dropAtoB = drop;
    }

    /** Drops every frame from B to A that {@code drop} picks (it must not keep the frame). */
    void dropBtoA(final java.util.function.Predicate<io.netty.buffer.ByteBuf> drop) {
        dropBtoA = drop;
    }

    /** The BTH opcode of a RoCEv2 frame (Ethernet, IPv4, UDP, BTH). */
    static int opcode(final io.netty.buffer.ByteBuf frame) {
        return frame.getUnsignedByte(frame.readerIndex() + BTH);
    }

    /** The BTH PSN of a RoCEv2 frame. */
    static int psn(final io.netty.buffer.ByteBuf frame) {
        return frame.getUnsignedMedium(frame.readerIndex() + BTH + 9);
    }

    private static final int BTH = 14 + 20 + 8;

    /** Shows every frame A sends (before the link's faults) to {@code tap}, which must not keep it. */
    void tapAtoB(final java.util.function.Consumer<io.netty.buffer.ByteBuf> tap) {
        tapAtoB = tap;
    }

    /** Marks every ECN-capable frame from A to B with CE, as a congested queue would. */
    void markCe(final boolean on) {
        markCe = on;
    }

    /** Sets CE on an ECT frame and fixes the IPv4 header checksum (the ICRC does not cover ECN). */
    static io.netty.buffer.ByteBuf setCe(final io.netty.buffer.ByteBuf frame) {
        final int ip = frame.readerIndex() + 14;
        final int tos = frame.getUnsignedByte(ip + 1);
        if ((tos & 3) == 0) {
            return frame;
        }
        frame.setByte(ip + 1, tos | 3);
        frame.setShort(ip + 10, 0);
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += frame.getUnsignedShort(ip + i);
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum = (sum & 0xFFFF) + (sum >>> 16);
        frame.setShort(ip + 10, ~sum & 0xFFFF);
        return frame;
    }

    /** One host: device, context, PD, CQ, memory. */
    static final class Host {
        Device device;
        Context ctx;
        ProtectionDomain pd;
        CompletionQueue cq;
        ByteBufMemory memory;
        MemoryRegion mr;
    }

    Fabric(final long seed, final LinkConfig link, final TransportConfig config) {
        this(seed, link, config, DeviceAttributes.defaults());
    }

    Fabric(final long seed, final LinkConfig link, final TransportConfig config, final DeviceAttributes attrs) {
        this(seed, link, config, attrs, PooledByteBufAllocator.DEFAULT);
    }

    /** With {@code allocator} for frames and host memory (benchmarks pass one without leak tracking). */
    Fabric(
            final long seed,
            final LinkConfig link,
            final TransportConfig config,
            final DeviceAttributes attrs,
            final io.netty.buffer.ByteBufAllocator allocator) {
        scheduler = new VirtualTimeScheduler(seed);
        a = new Host();
        b = new Host();
        final LinkModel[] links = new LinkModel[2];
        a.device = device("a", IP_A, 0xA, attrs, config, allocator, (frame, nowNs) -> {
            tapAtoB.accept(frame);
            if (dropAtoB.test(frame)) {
                frame.release();
                return;
            }
            links[0].send(markCe ? Fabric.setCe(frame) : frame);
        });
        b.device = device("b", IP_B, 0xB, attrs, config, allocator, (frame, nowNs) -> {
            if (dropBtoA.test(frame)) {
                frame.release();
                return;
            }
            links[1].send(frame);
        });
        ab = new LinkModel(scheduler, link, scheduler.random("link:a->b"), b.device);
        ba = new LinkModel(scheduler, link, scheduler.random("link:b->a"), a.device);
        links[0] = ab;
        links[1] = ba;
        for (final Host h : new Host[] {a, b}) {
            h.ctx = h.device.open();
            h.pd = h.ctx.allocatePd();
            h.cq = h.ctx.createCompletionQueue(65536, null);
            h.memory = ByteBufMemory.allocate(allocator, MEMORY_BYTES);
            h.mr = h.pd.registerMemoryRegion(
                    h.memory,
                    BASE,
                    AccessFlags.LOCAL_WRITE
                            | AccessFlags.REMOTE_WRITE
                            | AccessFlags.REMOTE_READ
                            | AccessFlags.REMOTE_ATOMIC);
        }
    }

    /** The errno of the {@link VerbsException} {@code r} throws; fails if it throws none. */
    static Errno errnoOf(final Runnable r) {
        try {
            r.run();
        } catch (final VerbsException e) {
            return e.errno();
        }
        throw new AssertionError("expected a VerbsException");
    }

    private Device device(
            final String name,
            final int ipv4,
            final long mac,
            final DeviceAttributes attrs,
            final TransportConfig config,
            final io.netty.buffer.ByteBufAllocator allocator,
            final FrameSink sink) {
        return Device.builder()
                .name(name)
                .ipv4(ipv4)
                .mac(mac)
                .attributes(attrs)
                .config(config)
                .timers(scheduler)
                .codec(new RocePacketCodec())
                .allocator(allocator)
                .sink(sink)
                .build();
    }

    /** A 100 Gbit/s link with 5 µs one-way delay (10 µs RTT) and a 4 MiB queue. */
    static LinkConfig fastLink() {
        return LinkConfig.of(100_000_000_000L, 5_000).withQueueCapacityBytes(4 << 20);
    }

    /** Applies the same faults to both directions. */
    void faults(final FaultConfig f) {
        ab.faults(f);
        ba.faults(f);
    }

    /** Connects an RC QP on A with one on B; both in RTS. Returns {A's, B's}. */
    QueuePair[] connectRc(final RecoveryMode mode, final QpCap cap, final Mtu mtu) {
        return connectRc(mode, cap, mtu, 10);
    }

    /** Like {@link #connectRc(RecoveryMode, QpCap, Mtu)} with the ACK timeout code {@code timeout}. */
    QueuePair[] connectRc(final RecoveryMode mode, final QpCap cap, final Mtu mtu, final int timeout) {
        final QpInitAttr ia = QpInitAttr.of(QpType.RC, a.cq);
        ia.recoveryMode = mode;
        ia.cap = cap.copy();
        final QpInitAttr ib = QpInitAttr.of(QpType.RC, b.cq);
        ib.recoveryMode = mode;
        ib.cap = cap.copy();
        final QueuePair qa = a.ctx.createQueuePair(a.pd, ia);
        final QueuePair qb = b.ctx.createQueuePair(b.pd, ib);
        RcConnector.connect(qa, qb.qpNum(), IP_B, 0xB, mtu, 0x100, 0x200, timeout);
        RcConnector.connect(qb, qa.qpNum(), IP_A, 0xA, mtu, 0x200, 0x100, timeout);
        qps.add(qa);
        qps.add(qb);
        return new QueuePair[] {qa, qb};
    }

    /**
     * Connects a UC QP on A with one on B, both in RTS with PSN 0x300 each way; B's takes its receives
     * from {@code srqB} when it is not null. Returns {A's, B's}.
     */
    QueuePair[] connectUc(final SharedReceiveQueue srqB) {
        final QueuePair[] p = pair(QpType.UC, srqB);
        ucToRts(p[0], p[1].qpNum(), IP_B, 0xB);
        ucToRts(p[1], p[0].qpNum(), IP_A, 0xA);
        return p;
    }

    /**
     * Connects an RC QP on A with one on B as {@link #connectRc(RecoveryMode, QpCap, Mtu)} does (go-back-N,
     * default capabilities, 1024-byte MTU); B's takes its receives from {@code srqB} when it is not null.
     */
    QueuePair[] connectRc(final SharedReceiveQueue srqB) {
        final QueuePair[] p = pair(QpType.RC, srqB);
        RcConnector.connect(p[0], p[1].qpNum(), IP_B, 0xB, Mtu.MTU_1024, 0x100, 0x200, 10);
        RcConnector.connect(p[1], p[0].qpNum(), IP_A, 0xA, Mtu.MTU_1024, 0x200, 0x100, 10);
        return p;
    }

    /**
     * A UD QP on A and one on B, both in RTS with Q_Key {@code qkey}; B's takes its receives from
     * {@code srqB} when it is not null. Returns {A's, B's}.
     */
    QueuePair[] connectUd(final int qkey, final SharedReceiveQueue srqB) {
        final QueuePair[] p = pair(QpType.UD, srqB);
        for (final QueuePair qp : p) {
            final QpAttr attr = new QpAttr();
            attr.qpState = QpState.INIT;
            attr.qkey = qkey;
            qp.modify(attr, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
            attr.qpState = QpState.RTR;
            qp.modify(attr, QpAttrMask.STATE);
            attr.qpState = QpState.RTS;
            qp.modify(attr, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
        }
        return p;
    }

    /** A QP of {@code type} on A and one on B (receiving from {@code srqB} if not null), closed with the fabric. */
    private QueuePair[] pair(final QpType type, final SharedReceiveQueue srqB) {
        final QueuePair qa = a.ctx.createQueuePair(a.pd, QpInitAttr.of(type, a.cq));
        final QpInitAttr ib = QpInitAttr.of(type, b.cq);
        ib.srq = srqB;
        final QueuePair qb = b.ctx.createQueuePair(b.pd, ib);
        qps.add(qa);
        qps.add(qb);
        return new QueuePair[] {qa, qb};
    }

    /** RESET → INIT → RTR → RTS of a UC QP with exactly the attributes UC requires, PSN 0x300 each way. */
    static void ucToRts(final QueuePair qp, final int destQpn, final int destIp, final long destMac) {
        ucToRtr(qp, destQpn, destIp, destMac, 0x300);
        final QpAttr a = new QpAttr();
        a.qpState = QpState.RTS;
        a.sqPsn = 0x300;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.SQ_PSN);
    }

    /** RESET → INIT → RTR of a UC QP (remote write allowed, 1024-byte MTU) expecting {@code rqPsn}. */
    static void ucToRtr(final QueuePair qp, final int destQpn, final int destIp, final long destMac, final int rqPsn) {
        final QpAttr a = new QpAttr();
        a.qpState = QpState.INIT;
        a.portNum = 1;
        a.qpAccessFlags = AccessFlags.REMOTE_WRITE;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        a.qpState = QpState.RTR;
        a.ahAttr = AhAttr.of(destIp, destMac);
        a.pathMtu = Mtu.MTU_1024;
        a.destQpNum = destQpn;
        a.rqPsn = rqPsn;
        qp.modify(a, QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN);
    }

    /**
     * A shared receive queue of {@code h} (one scatter element a receive, limit {@code srqLimit}),
     * destroyed on close after the QPs.
     */
    SharedReceiveQueue srq(final Host h, final int maxWr, final int srqLimit) {
        final SharedReceiveQueue srq = h.ctx.createSharedReceiveQueue(h.pd, maxWr, 1, srqLimit);
        srqs.add(srq);
        return srq;
    }

    /** Everything {@code cq} holds, in order, each completion copied out of the queue's slots. */
    static List<WorkCompletion> drain(final CompletionQueue cq) {
        final List<WorkCompletion> out = new ArrayList<>();
        final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        int n;
        while ((n = cq.poll(wcs)) > 0) {
            for (int i = 0; i < n; i++) {
                final WorkCompletion c = new WorkCompletion();
                c.copyFrom(wcs[i]);
                out.add(c);
            }
        }
        return out;
    }

    /** Destroys one of this fabric's QPs now, as an application closing it does (close skips it). */
    void destroyNow(final QueuePair qp) {
        qps.remove(qp);
        qp.destroy();
    }

    /** Moves each QP to RESET and destroys it (what a test does with the QPs it made itself). */
    static void destroy(final QueuePair... qps) {
        final QpAttr reset = new QpAttr();
        reset.qpState = QpState.RESET;
        for (final QueuePair qp : qps) {
            qp.modify(reset, QpAttrMask.STATE);
            qp.destroy();
        }
    }

    static void toRts(
            final QueuePair qp,
            final int destQpn,
            final int destIp,
            final long destMac,
            final Mtu mtu,
            final int sqPsn,
            final int rqPsn) {
        RcConnector.connect(qp, destQpn, destIp, destMac, mtu, sqPsn, rqPsn, 10);
    }

    boolean runUntil(final BooleanSupplier condition, final long forNs) {
        return scheduler.runUntil(condition, scheduler.nowNs() + forNs);
    }

    /** Lets everything in flight settle (final ACKs, duplicates). */
    void settle() {
        scheduler.runFor(20_000_000);
    }

    @Override
    public void close() {
        for (final QueuePair qp : qps) {
            if (qp.state() != QpState.RESET) {
                final QpAttr r = new QpAttr();
                r.qpState = QpState.RESET;
                qp.modify(r, QpAttrMask.STATE);
            }
            qp.destroy();
        }
        for (final SharedReceiveQueue srq : srqs) {
            srq.destroy();
        }
        ab.close();
        ba.close();
        for (final Host h : new Host[] {a, b}) {
            h.mr.deregister();
            h.memory.release();
            h.cq.destroy();
            h.pd.deallocate();
            h.ctx.close();
            h.device.close();
        }
    }
}
