package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.runtime.DelayLine;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EgressQueue;
import org.vrdma.vswitch.pipeline.InnerFrame;
import org.vrdma.vswitch.pipeline.IntOption;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.wire.Ipv4UdpHeaders;

/**
 * An egress port of a fabric switch: the vswitch's {@link EgressQueue} model (the same one {@code
 * EgressPort} drives: link rate in picoseconds with the remainder carried, tail drop, RED/ECN
 * marking at arrival, seeded data and control faults as packets leave, from the same named random
 * streams) plus INT stamping at departure, working on tagged frames: length, ECN, control and the
 * IPv4 header's place come from the {@link FrameTag}, so a packet crossing the port costs no read
 * of its memory. Departing packets go to a {@link TaggedSink}; those a fault delays wait in a
 * {@link DelayLine} first (equal delays keep their order). Allocates nothing per packet once its
 * rings have grown.
 */
final class FabricPort implements TimerHandler {
    private final String name;
    private final TimerService timers;
    private final EgressQueue queue;
    private final TaggedSink output;
    private final boolean intStamping;
    private final long rateBps;
    private final DelayLine delayed;

    private long armedTimer = TimerService.NO_TIMER;
    private long ecnMarked;

    FabricPort(String name, TimerService timers, EgressConfig config, SeededRandoms randoms, TaggedSink output) {
        this.name = name;
        this.timers = timers;
        this.output = output;
        this.intStamping = config.intStamping();
        this.rateBps = config.rateBps();
        this.queue = new EgressQueue(name, config, randoms, timers.nowNs());
        this.delayed = new DelayLine(timers, output::onFrame);
    }

    String name() {
        return name;
    }

    /** Queues a tagged packet; the port owns it from here on. */
    void offer(ByteBuf packet, long tag) {
        int bytes = FrameTag.bytes(tag);
        int verdict = queue.onArrival(bytes, FrameTag.ecnCapable(tag));
        if (verdict == EgressAdmission.DROP) {
            packet.release();
            return;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE && FrameTag.ecn(tag) != Ipv4UdpHeaders.CE) {
            InnerFrame.markCe(packet, packet.readerIndex() + FrameTag.ipOffset(tag), FrameTag.ipHeaderBytes(tag));
            tag = FrameTag.withCe(tag);
            ecnMarked++;
        }
        long nowNs = timers.nowNs();
        if (queue.cutsThrough()) {
            depart(packet, tag, nowNs, 0);
            return;
        }
        long deadlineNs = queue.enqueue(packet, tag, bytes, nowNs);
        if (deadlineNs != EgressQueue.NO_DEADLINE) {
            armedTimer = timers.scheduleAt(deadlineNs, this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        if (timerId != armedTimer) {
            return;
        }
        armedTimer = TimerService.NO_TIMER;
        while (queue.headDoneBy(nowNs)) {
            ByteBuf packet = queue.headPacket();
            long tag = queue.headTag();
            long left = queue.removeHead(FrameTag.bytes(tag));
            depart(packet, tag, nowNs, left);
            if (queue.queuedPackets() > 0) {
                queue.startNextHead(FrameTag.bytes(queue.headTag()));
            }
        }
        if (queue.queuedPackets() > 0) {
            armedTimer = timers.scheduleAt(queue.headDeadlineNs(), this);
        }
    }

    private void depart(ByteBuf packet, long tag, long nowNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(FrameTag.bytes(tag));
        if (intStamping) {
            int start = packet.readerIndex();
            int data = IntOption.find(packet, start + UnderlayPort.OUTER_HEADERS_BYTES, packet.writerIndex());
            if (data >= 0) {
                IntOption.stamp(packet, data, queueBytesLeft, txBytes, nowNs, rateBps);
            }
        }
        boolean control = FrameTag.control(tag);
        int verdict = queue.judge(control);
        if (verdict == FaultInjector.DROP) {
            packet.release();
            return;
        }
        FaultInjector faults = queue.faults(control);
        if (verdict == FaultInjector.DUPLICATE) {
            // A real copy: the receiver rewrites headers in place.
            deliver(packet.copy(), tag, faults.duplicateDelayNs(), nowNs);
        }
        deliver(packet, tag, faults.delayNs(), nowNs);
    }

    private void deliver(ByteBuf packet, long tag, long delayNs, long nowNs) {
        if (delayNs == 0 && delayed.size() == 0) {
            output.onFrame(packet, tag, nowNs);
        } else {
            // Once anything is held, everything waits in the delay line so equal delays keep their order.
            delayed.add(packet, tag, delayNs);
        }
    }

    /** Releases every queued and delayed packet and cancels the timers. */
    void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        queue.releaseAll();
        delayed.close();
    }

    long txPackets() {
        return queue.txPackets();
    }

    long bufferDrops() {
        return queue.bufferDrops();
    }

    long ecnMarked() {
        return ecnMarked;
    }

    long dataLost() {
        return queue.dataLost();
    }

    long controlLost() {
        return queue.controlLost();
    }

    long queuedBytes() {
        return queue.queuedBytes();
    }
}
