package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.function.Function;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.harness.lab.EniHandle;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.memory.LengthOnlyMemory;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RateWindowSourceFactory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.MemoryRegion;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.QpCap;
import org.vrdma.vnic.verbs.QpInitAttr;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vswitch.pipeline.IntTelemetrySink;

/**
 * One ENI of a virtual lab: its vNIC ({@link Device}) with an opened context, PD, CQ on a
 * completion channel and one registered buffer, the per-QP congestion-control selector, and the
 * receive hook that echoes INT telemetry (for HPCC): INT records of a data packet are kept for its
 * flow at the receiver and handed to the sender's algorithm when the ACK for that flow arrives,
 * as the ACK carries them in HPCC.
 */
final class VirtualEni implements EniHandle, IntTelemetrySink, TimerHandler {
    static final long BUFFER_VA = 0x1000_0000L;

    final LabNetwork.LabEni spec;
    final int hostIndex;
    final Device device;
    final Context context;
    final ProtectionDomain pd;
    final CompletionChannel channel;
    final CompletionQueue cq;
    /** The registered buffer's bytes; null when the lab carries payload lengths only. */
    final ByteBufMemory memory;

    final MemoryRegion mr;
    final int bufferBytes;
    private final VirtualTimeScheduler scheduler;
    private final FlowEngine engine;
    private final WorkCompletion[] batch = new WorkCompletion[64];
    private boolean drainScheduled;

    /** Flows by the local QP number (index qpn - FIRST_QPN): as requester, and as responder. */
    final Flow[] requesterFlows;

    final Flow[] responderFlows;

    /** The congestion control the next created QP gets (null: the ENI's default). */
    private RateWindowSourceFactory nextQpFactory;

    private RateWindowSource lastSource;

    VirtualEni(
            LabNetwork.LabEni spec,
            int hostIndex,
            Device.Builder builder,
            VirtualTimeScheduler scheduler,
            ByteBufAllocator allocator,
            int bufferBytes,
            boolean lengthOnly,
            FlowEngine engine) {
        this.spec = spec;
        this.hostIndex = hostIndex;
        this.scheduler = scheduler;
        this.engine = engine;
        this.device = builder.build();
        this.context = device.open();
        this.pd = context.allocatePd();
        this.channel = context.createCompletionChannel();
        this.cq = context.createCompletionQueue(4096, channel);
        this.bufferBytes = bufferBytes;
        this.memory = lengthOnly ? null : ByteBufMemory.allocate(allocator, bufferBytes);
        MemoryRegionBacking backing = lengthOnly ? new LengthOnlyMemory(bufferBytes) : memory;
        this.mr = pd.registerMemoryRegion(
                backing, BUFFER_VA, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        int maxQp = device.attributes().maxQp();
        this.requesterFlows = new Flow[maxQp];
        this.responderFlows = new Flow[maxQp];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
        channel.handler(c -> {
            if (!drainScheduled) {
                drainScheduled = true;
                scheduler.scheduleAt(scheduler.nowNs(), this);
            }
        });
        cq.requestNotify(false);
    }

    /**
     * The factory a device of this ENI uses: the per-QP override when one is set, else {@code
     * fallback}; remembers the source it made so the flow can reach its algorithm.
     */
    static RateWindowSourceFactory selecting(VirtualEni[] self, RateWindowSourceFactory fallback) {
        return (qpNum, lineRateBps, baseRttNs, defaultWindowBytes) -> {
            VirtualEni eni = self[0];
            RateWindowSourceFactory override = eni == null ? null : eni.nextQpFactory;
            RateWindowSource s =
                    (override != null ? override : fallback).create(qpNum, lineRateBps, baseRttNs, defaultWindowBytes);
            if (eni != null) {
                eni.lastSource = s;
            }
            return s;
        };
    }

    /** Creates an RC QP in RESET with congestion control {@code cc} (null: the ENI's). */
    QueuePair createQp(RateWindowSourceFactory cc, RecoveryMode mode, int depth) {
        nextQpFactory = cc;
        try {
            QpInitAttr attr = QpInitAttr.of(QpType.RC, cq);
            attr.recoveryMode = mode;
            attr.cap = new QpCap(depth, depth, 1, 1, 64);
            return context.createQueuePair(pd, attr);
        } finally {
            nextQpFactory = null;
        }
    }

    /**
     * Creates an RC QP in RESET with send and receive queues of the given depths and no inline data
     * (a flow's requester posts no receives and nothing inline, its responder no sends).
     */
    QueuePair createQp(RateWindowSourceFactory cc, RecoveryMode mode, int sendDepth, int recvDepth) {
        nextQpFactory = cc;
        try {
            QpInitAttr attr = QpInitAttr.of(QpType.RC, cq);
            attr.recoveryMode = mode;
            attr.cap = new QpCap(sendDepth, recvDepth, 1, 1, 0);
            return context.createQueuePair(pd, attr);
        } finally {
            nextQpFactory = null;
        }
    }

    /** The rate/window source the last {@link #createQp} made. */
    RateWindowSource lastSource() {
        return lastSource;
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        device.onFrame(frame, nowNs);
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs, IntTelemetry telemetry) {
        int start = frame.readerIndex();
        if (frame.readableBytes() >= 14 + 20 + 8 + 12) {
            int ip = start + 14;
            int bth = ip + (frame.getUnsignedByte(ip) & 0x0F) * 4 + 8;
            if (bth + 12 <= frame.writerIndex()) {
                int opcode = frame.getUnsignedByte(bth);
                int qpIndex = (frame.getMedium(bth + 5) & 0xFFFFFF) - Device.FIRST_QPN;
                if (qpIndex >= 0 && qpIndex < requesterFlows.length) {
                    if (opcode == org.vrdma.wire.Opcode.RC_ACKNOWLEDGE) {
                        Flow f = requesterFlows[qpIndex];
                        if (f != null && f.hasInt && f.cc != null) {
                            f.cc.onInt(nowNs, f.lastInt);
                        }
                    } else if (opcode != org.vrdma.wire.Opcode.CNP) {
                        Flow f = responderFlows[qpIndex];
                        if (f != null) {
                            f.lastInt.copyFrom(telemetry);
                            f.hasInt = true;
                        }
                    }
                }
            }
        }
        device.onFrame(frame, nowNs);
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        drainScheduled = false;
        int events = 0;
        while (channel.getEvent() != null) {
            events++;
        }
        if (events > 0) {
            cq.ackEvents(events);
        }
        drain(nowNs);
        cq.requestNotify(false);
        drain(nowNs);
    }

    private void drain(long nowNs) {
        int n;
        while ((n = cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                engine.onCompletion(this, batch[i], nowNs);
            }
        }
    }

    @Override
    public LabNetwork.LabEni spec() {
        return spec;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public <T> T call(Function<Device, T> action) {
        return action.apply(device);
    }

    void close() {
        channel.handler(null);
        mr.deregister();
        cq.destroy();
        channel.destroy();
        pd.deallocate();
        context.close();
        device.close();
        if (memory != null) {
            memory.release();
        }
    }
}
