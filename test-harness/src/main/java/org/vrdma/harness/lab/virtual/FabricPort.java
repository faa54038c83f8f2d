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
 * An egress port of a fabric switch and the link behind it: the vswitch's {@link EgressQueue}
 * model (the same one {@code EgressPort} drives: link rate in picoseconds with the remainder
 * carried, tail drop, RED/ECN marking at arrival, seeded data and control faults as packets leave,
 * from the same named random streams) plus INT stamping at departure, then the link's propagation
 * delay to the far end. It works on tagged frames: length, ECN, control and the IPv4 header's
 * place come from the {@link FrameTag}, so a packet crossing the port costs no read of its memory.
 *
 * <p>Without faults a packet costs one event per hop: its arrival at the far end. Departures are
 * determined by the queue alone (a packet leaves when its serialisation ends), so the port accounts
 * for them when it next needs its queue's state: before admitting an arrival (every packet that
 * finished before that instant has left; one finishing at that very nanosecond leaves after the
 * arrival, as when the arrival's event came first) and before handing packets to the far end. The
 * departed packets wait in a ring until their arrival time, and one timer is armed for the earliest
 * arrival. With faults (loss, duplication, delay, reordering: rare, in small labs) packets leave at
 * a departure event of their own, as in {@code EgressPort}, and cross a {@link Wire}; those a fault
 * delays wait in a {@link DelayLine} first (equal delays keep their order). Allocates nothing per
 * packet once its rings have grown.
 */
final class FabricPort implements TimerHandler {
    private final String name;
    private final TimerService timers;
    private final EgressQueue queue;
    private TaggedSink output;
    private final long propagationNs;
    private final boolean intStamping;
    private final long rateBps;
    /** No faults: departures are accounted lazily, the only event is the arrival at the far end. */
    private final boolean direct;
    /** With faults: the delay line and the link's propagation delay after it. */
    private final DelayLine delayed;

    private final Wire wire;

    // Direct mode: departed packets on the link, in departure order.
    private ByteBuf[] flight = new ByteBuf[16];
    private long[] flightTags = new long[16];
    private long[] flightArrivalNs = new long[16];
    private int flightHead;
    private int flightCount;
    private boolean delivering;

    private long armedTimer = TimerService.NO_TIMER;
    private long ecnMarked;
    private long malformedDrops;

    /**
     * @param propagationNs the link's propagation delay; packets reach the far end ({@link
     *     #connect}) that long after they leave the queue
     */
    FabricPort(String name, TimerService timers, EgressConfig config, SeededRandoms randoms, long propagationNs) {
        this.name = name;
        this.timers = timers;
        this.propagationNs = propagationNs;
        this.intStamping = config.intStamping();
        this.rateBps = config.rateBps();
        this.queue = new EgressQueue(name, config, randoms, timers.nowNs());
        this.direct = config.dataFaults().isNone() && config.controlFaults().isNone();
        if (direct) {
            this.wire = null;
            this.delayed = null;
        } else {
            this.wire = new Wire(timers, propagationNs);
            this.delayed = new DelayLine(timers, (DelayLine.TaggedSink) wire::onFrame);
        }
    }

    /** Where packets arrive at the far end of the link; set once before the first packet. */
    void connect(TaggedSink farEnd) {
        this.output = farEnd;
        if (wire != null) {
            wire.connect(farEnd);
        }
    }

    String name() {
        return name;
    }

    /** Queues a tagged packet; the port owns it from here on. */
    void offer(ByteBuf packet, long tag) {
        if (tag == FrameTag.MALFORMED) {
            // Not an underlay frame (vSwitches never send one): dropped, counted.
            malformedDrops++;
            packet.release();
            return;
        }
        long nowNs = timers.nowNs();
        if (direct) {
            leaveBy(nowNs - 1);
        }
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
        if (queue.cutsThrough()) {
            if (direct) {
                leave(packet, tag, nowNs, 0);
                armIfIdle();
            } else {
                depart(packet, tag, nowNs, 0);
            }
            return;
        }
        long deadlineNs = queue.enqueue(packet, tag, bytes, nowNs);
        if (direct) {
            armIfIdle();
        } else if (deadlineNs != EgressQueue.NO_DEADLINE) {
            armedTimer = timers.scheduleAt(deadlineNs, this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        if (timerId != armedTimer) {
            return;
        }
        armedTimer = TimerService.NO_TIMER;
        if (direct) {
            deliverArrived(nowNs);
            return;
        }
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

    // ---------------------------------------------------------------- direct mode (no faults)

    /** Moves every packet whose serialisation ended by {@code limitNs} from the queue onto the link. */
    private void leaveBy(long limitNs) {
        while (queue.queuedPackets() > 0) {
            long departNs = queue.headDeadlineNs();
            if (departNs > limitNs) {
                return;
            }
            ByteBuf packet = queue.headPacket();
            long tag = queue.headTag();
            long left = queue.removeHead(FrameTag.bytes(tag));
            if (queue.queuedPackets() > 0) {
                queue.startNextHead(FrameTag.bytes(queue.headTag()));
            }
            leave(packet, tag, departNs, left);
        }
    }

    /** A packet leaves the queue at {@code departNs}: counted, INT-stamped, on the link. */
    private void leave(ByteBuf packet, long tag, long departNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(FrameTag.bytes(tag));
        if (intStamping && FrameTag.mayCarryOptions(tag)) {
            stampInt(packet, queueBytesLeft, txBytes, departNs);
        }
        queue.onFaultFreeDeparture(FrameTag.control(tag)); // no faults: nothing to draw
        if (flightCount == flight.length) {
            growFlight();
        }
        int tail = (flightHead + flightCount) & (flight.length - 1);
        flight[tail] = packet;
        flightTags[tail] = tag;
        flightArrivalNs[tail] = departNs + propagationNs;
        flightCount++;
    }

    /** Hands the far end every packet that has arrived by {@code nowNs}; re-arms for the next one. */
    private void deliverArrived(long nowNs) {
        leaveBy(nowNs - propagationNs);
        delivering = true;
        try {
            while (flightCount > 0 && flightArrivalNs[flightHead] <= nowNs) {
                ByteBuf f = flight[flightHead];
                long tag = flightTags[flightHead];
                flight[flightHead] = null;
                flightHead = (flightHead + 1) & (flight.length - 1);
                flightCount--;
                output.onFrame(f, tag, nowNs);
            }
        } finally {
            delivering = false;
        }
        if (armedTimer == TimerService.NO_TIMER) {
            armIfIdle();
        }
    }

    /** Arms the timer for the next arrival at the far end when none is armed. */
    private void armIfIdle() {
        if (armedTimer != TimerService.NO_TIMER || delivering) {
            return;
        }
        long nextNs;
        if (flightCount > 0) {
            nextNs = flightArrivalNs[flightHead];
        } else if (queue.queuedPackets() > 0) {
            nextNs = queue.headDeadlineNs() + propagationNs;
        } else {
            return;
        }
        armedTimer = timers.scheduleAt(nextNs, this);
    }

    private void growFlight() {
        int n = flight.length;
        ByteBuf[] f = new ByteBuf[n * 2];
        long[] t = new long[n * 2];
        long[] a = new long[n * 2];
        for (int i = 0; i < flightCount; i++) {
            int j = (flightHead + i) & (n - 1);
            f[i] = flight[j];
            t[i] = flightTags[j];
            a[i] = flightArrivalNs[j];
        }
        flight = f;
        flightTags = t;
        flightArrivalNs = a;
        flightHead = 0;
    }

    // ---------------------------------------------------------------- with faults

    private void depart(ByteBuf packet, long tag, long nowNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(FrameTag.bytes(tag));
        if (intStamping && FrameTag.mayCarryOptions(tag)) {
            stampInt(packet, queueBytesLeft, txBytes, nowNs);
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
            wire.onFrame(packet, tag, nowNs);
        } else {
            // Once anything is held, everything waits in the delay line so equal delays keep their order.
            delayed.add(packet, tag, delayNs);
        }
    }

    private void stampInt(ByteBuf packet, long queueBytesLeft, long txBytes, long nowNs) {
        int start = packet.readerIndex();
        int data = IntOption.find(packet, start + UnderlayPort.OUTER_HEADERS_BYTES, packet.writerIndex());
        if (data >= 0) {
            IntOption.stamp(packet, data, queueBytesLeft, txBytes, nowNs, rateBps);
        }
    }

    /** Releases every queued, delayed and travelling packet and cancels the timers. */
    void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        queue.releaseAll();
        while (flightCount > 0) {
            flight[flightHead].release();
            flight[flightHead] = null;
            flightHead = (flightHead + 1) & (flight.length - 1);
            flightCount--;
        }
        if (!direct) {
            delayed.close();
            wire.close();
        }
    }

    /** Brings the queue up to date: packets whose serialisation ended before now have left. */
    private void settle() {
        if (direct) {
            leaveBy(timers.nowNs() - 1);
        }
    }

    long txPackets() {
        settle();
        return queue.txPackets();
    }

    long bufferDrops() {
        return queue.bufferDrops();
    }

    long ecnMarked() {
        return ecnMarked;
    }

    /** Frames offered with a {@link FrameTag#MALFORMED} tag, dropped. */
    long malformedDrops() {
        return malformedDrops;
    }

    long dataLost() {
        return queue.dataLost();
    }

    long controlLost() {
        return queue.controlLost();
    }

    long queuedBytes() {
        settle();
        return queue.queuedBytes();
    }
}
