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
 * port keeps the packets itself, queued and departed alike, in one ring in arrival order (the queue
 * only counts and times them): a packet stays in its slot from its arrival at the port to its
 * arrival at the far end, and one timer is armed for the earliest arrival. With faults (loss, duplication, delay, reordering: rare, in small labs) packets leave at
 * a departure event of their own, as in {@code EgressPort}, and cross a {@link Wire}; those a fault
 * delays wait in a {@link DelayLine} first (equal delays keep their order). Allocates nothing per
 * packet once its rings have grown.
 *
 * <p>With priority flow control ({@link PfcIngress}) a port keeps the departure event too, so the
 * switch's ingress accounting sees each packet leave when its serialisation ends, and it honours
 * PAUSE frames from the link's far end ({@link #onPause}): the packet being serialised finishes,
 * the next starts when the pause ends (a resume, or its quanta run out). A switch port records, per
 * queued packet, the ingress port it is charged to ({@link #offerCharged}).
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
    /** No fault configured: departures skip the fault draw (PFC ports have departure events without faults). */
    private final boolean faultFree;

    // Direct mode: the packets on the link (departed, in departure order) followed by those queued.
    private ByteBuf[] ring = new ByteBuf[16];
    /**
     * Per packet: its tag and, once it has departed, its arrival time at the far end, side by side
     * (one cache line).
     */
    private long[] tagAndArrivalNs = new long[32];

    /** The oldest packet on the link; the queue's head is {@link #flightCount} slots further. */
    private int ringHead;

    private int flightCount;
    private boolean delivering;

    private long armedTimer = TimerService.NO_TIMER;
    private long ecnMarked;
    private long malformedDrops;

    /** PFC state, or null: kept apart so a port without PFC keeps its hot fields in fewer cache lines. */
    private final Pfc pfc;

    /** A port's priority flow control: what its queued packets are charged to, and pauses from the far end. */
    private static final class Pfc {
        /** The switch accounting for the packets queued here (null: a host's NIC), each packet's ingress port. */
        PfcIngress charged;

        int[] ingressRing = new int[0];
        int ingressHead;
        int ingressCount;
        boolean paused;
        long pausedSinceNs;
        long pausedUntilNs;
        long pauseTimer = TimerService.NO_TIMER;
        long pausesReceived;
        long resumesReceived;
        long pausedNs;
        long pauseDelayedPackets;
    }

    /**
     * @param propagationNs the link's propagation delay; packets reach the far end ({@link
     *     #connect}) that long after they leave the queue
     */
    FabricPort(String name, TimerService timers, EgressConfig config, SeededRandoms randoms, long propagationNs) {
        this(name, timers, config, randoms, propagationNs, false);
    }

    /**
     * @param pfc whether the port takes part in priority flow control: it then keeps a departure
     *     event per packet, so departures are accounted when they happen
     */
    FabricPort(
            String name,
            TimerService timers,
            EgressConfig config,
            SeededRandoms randoms,
            long propagationNs,
            boolean pfc) {
        this.name = name;
        this.timers = timers;
        this.propagationNs = propagationNs;
        this.intStamping = config.intStamping();
        this.rateBps = config.rateBps();
        this.queue = new EgressQueue(name, config, randoms, timers.nowNs());
        this.faultFree = config.dataFaults().isNone() && config.controlFaults().isNone();
        this.direct = faultFree && !pfc;
        this.pfc = pfc ? new Pfc() : null;
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
                // Nothing queued: the packet goes straight onto the link.
                leave(putTail(packet, tag), tag, nowNs, 0);
                armIfIdle();
            } else {
                depart(packet, tag, nowNs, 0);
            }
            return;
        }
        if (direct) {
            putTail(packet, tag);
            queue.enqueueCounted(bytes, nowNs);
            armIfIdle();
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
            if (pfc != null && timerId == pfc.pauseTimer) {
                onPauseExpiry(nowNs);
            }
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
            if (pfc != null && pfc.charged != null) {
                pfc.charged.onDeparture(popIngress(), FrameTag.bytes(tag), nowNs);
            }
            depart(packet, tag, nowNs, left);
            if (queue.queuedPackets() > 0) {
                queue.startNextHead(FrameTag.bytes(queue.headTag()));
            }
        }
        if (queue.queuedPackets() > 0 && !queue.headHeld()) {
            armedTimer = timers.scheduleAt(queue.headDeadlineNs(), this);
        }
    }

    // ---------------------------------------------------------------- priority flow control

    /** Charges this switch port's queued packets to {@code ingress}'s ports; set once, before traffic. */
    void chargeTo(PfcIngress ingress) {
        pfc.charged = ingress;
        pfc.ingressRing = new int[64];
    }

    /**
     * Queues a packet that the switch has charged to its ingress port {@code in} (PFC); the port
     * owns it from here on and releases the charge when it leaves.
     */
    void offerCharged(ByteBuf packet, long tag, int in) {
        long nowNs = timers.nowNs();
        int bytes = FrameTag.bytes(tag);
        int verdict = queue.onArrival(bytes, FrameTag.ecnCapable(tag));
        if (verdict == EgressAdmission.DROP) {
            pfc.charged.onDeparture(in, bytes, nowNs);
            packet.release();
            return;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE && FrameTag.ecn(tag) != Ipv4UdpHeaders.CE) {
            InnerFrame.markCe(packet, packet.readerIndex() + FrameTag.ipOffset(tag), FrameTag.ipHeaderBytes(tag));
            tag = FrameTag.withCe(tag);
            ecnMarked++;
        }
        if (queue.cutsThrough()) {
            pfc.charged.onDeparture(in, bytes, nowNs);
            depart(packet, tag, nowNs, 0);
            return;
        }
        Pfc f = pfc;
        if (f.ingressCount == f.ingressRing.length) {
            growIngress();
        }
        f.ingressRing[(f.ingressHead + f.ingressCount) & (f.ingressRing.length - 1)] = in;
        f.ingressCount++;
        long deadlineNs = queue.enqueue(packet, tag, bytes, nowNs);
        if (deadlineNs != EgressQueue.NO_DEADLINE) {
            armedTimer = timers.scheduleAt(deadlineNs, this);
        }
    }

    private int popIngress() {
        Pfc f = pfc;
        int in = f.ingressRing[f.ingressHead];
        f.ingressHead = (f.ingressHead + 1) & (f.ingressRing.length - 1);
        f.ingressCount--;
        return in;
    }

    private void growIngress() {
        Pfc f = pfc;
        int n = f.ingressRing.length;
        int[] r = new int[n * 2];
        for (int i = 0; i < f.ingressCount; i++) {
            r[i] = f.ingressRing[(f.ingressHead + i) & (n - 1)];
        }
        f.ingressRing = r;
        f.ingressHead = 0;
    }

    /** How long a PAUSE of {@code quanta} (512 bit times each at this link's rate) stops the port. */
    long pauseNs(int quanta) {
        return rateBps == 0 ? 0 : (quanta * 512L * 1_000_000_000L + rateBps - 1) / rateBps;
    }

    /**
     * A PAUSE frame from the link's far end arrived: {@code quanta > 0} stops the port (after the
     * packet being serialised) for that long from now, replacing any pause in force; 0 resumes it.
     */
    void onPause(int quanta, long nowNs) {
        if (quanta == 0) {
            pfc.resumesReceived++;
            resume(nowNs);
            return;
        }
        pfc.pausesReceived++;
        pfc.pausedUntilNs = nowNs + pauseNs(quanta);
        if (!pfc.paused) {
            pfc.paused = true;
            pfc.pausedSinceNs = nowNs;
            queue.pause();
        }
        if (pfc.pauseTimer == TimerService.NO_TIMER) {
            pfc.pauseTimer = timers.scheduleAt(pfc.pausedUntilNs, this);
        }
    }

    private void onPauseExpiry(long nowNs) {
        pfc.pauseTimer = TimerService.NO_TIMER;
        if (!pfc.paused) {
            return;
        }
        if (nowNs >= pfc.pausedUntilNs) {
            resume(nowNs);
        } else {
            pfc.pauseTimer = timers.scheduleAt(pfc.pausedUntilNs, this); // refreshed meanwhile
        }
    }

    private void resume(long nowNs) {
        if (!pfc.paused) {
            return;
        }
        pfc.paused = false;
        pfc.pausedNs += nowNs - pfc.pausedSinceNs;
        // Every packet still queued waited behind the pause, whatever its destination.
        pfc.pauseDelayedPackets += queue.queuedPackets();
        timers.cancel(pfc.pauseTimer);
        pfc.pauseTimer = TimerService.NO_TIMER;
        if (queue.resume()) {
            armedTimer = timers.scheduleAt(queue.startHeadAt(FrameTag.bytes(queue.headTag()), nowNs), this);
        }
    }

    boolean paused() {
        return pfc.paused;
    }

    /** PAUSE frames with quanta received (refreshes included). */
    long pausesReceived() {
        return pfc.pausesReceived;
    }

    /** Resumes (PAUSE frames of zero quanta) received. */
    long resumesReceived() {
        return pfc.resumesReceived;
    }

    /** Time paused so far, a pause still in force counted up to {@code nowNs}. */
    long pausedNs(long nowNs) {
        return pfc.pausedNs + (pfc.paused ? nowNs - pfc.pausedSinceNs : 0);
    }

    /** Packets that were queued here when a pause ended: each waited behind it. */
    long pauseDelayedPackets() {
        return pfc.pauseDelayedPackets + (pfc.paused ? queue.queuedPackets() : 0);
    }

    // ---------------------------------------------------------------- direct mode (no faults)

    /** Puts a packet in the ring's next free slot, after those queued; returns the slot. */
    private int putTail(ByteBuf packet, long tag) {
        int held = flightCount + queue.queuedPackets();
        if (held == ring.length) {
            growRing(held);
        }
        int tail = (ringHead + held) & (ring.length - 1);
        ring[tail] = packet;
        tagAndArrivalNs[2 * tail] = tag;
        return tail;
    }

    /** Moves every packet whose serialisation ended by {@code limitNs} from the queue onto the link. */
    private void leaveBy(long limitNs) {
        while (queue.queuedPackets() > 0) {
            long departNs = queue.headDeadlineNs();
            if (departNs > limitNs) {
                return;
            }
            int mask = ring.length - 1;
            int slot = (ringHead + flightCount) & mask;
            long tag = tagAndArrivalNs[2 * slot];
            long left = queue.removeCountedHead(FrameTag.bytes(tag));
            if (queue.queuedPackets() > 0) {
                queue.startNextHead(FrameTag.bytes(tagAndArrivalNs[2 * ((slot + 1) & mask)]));
            }
            leave(slot, tag, departNs, left);
        }
    }

    /** The packet in {@code slot} leaves the queue at {@code departNs}: counted, INT-stamped, on the link. */
    private void leave(int slot, long tag, long departNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(FrameTag.bytes(tag));
        if (intStamping && FrameTag.mayCarryOptions(tag)) {
            stampInt(ring[slot], queueBytesLeft, txBytes, departNs);
        }
        queue.onFaultFreeDeparture(FrameTag.control(tag)); // no faults: nothing to draw
        tagAndArrivalNs[2 * slot + 1] = departNs + propagationNs;
        flightCount++;
    }

    /** Hands the far end every packet that has arrived by {@code nowNs}; re-arms for the next one. */
    private void deliverArrived(long nowNs) {
        leaveBy(nowNs - propagationNs);
        delivering = true;
        try {
            while (flightCount > 0 && tagAndArrivalNs[2 * ringHead + 1] <= nowNs) {
                ByteBuf f = ring[ringHead];
                long tag = tagAndArrivalNs[2 * ringHead];
                ring[ringHead] = null;
                ringHead = (ringHead + 1) & (ring.length - 1);
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
            nextNs = tagAndArrivalNs[2 * ringHead + 1];
        } else if (queue.queuedPackets() > 0) {
            nextNs = queue.headDeadlineNs() + propagationNs;
        } else {
            return;
        }
        armedTimer = timers.scheduleAt(nextNs, this);
    }

    /** Doubles the ring, which holds {@code held} packets from {@link #ringHead} on. */
    private void growRing(int held) {
        int n = ring.length;
        ByteBuf[] r = new ByteBuf[n * 2];
        long[] m = new long[n * 4];
        for (int i = 0; i < held; i++) {
            int j = (ringHead + i) & (n - 1);
            r[i] = ring[j];
            m[2 * i] = tagAndArrivalNs[2 * j];
            m[2 * i + 1] = tagAndArrivalNs[2 * j + 1];
        }
        ring = r;
        tagAndArrivalNs = m;
        ringHead = 0;
    }

    // ---------------------------------------------------------------- with faults

    private void depart(ByteBuf packet, long tag, long nowNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(FrameTag.bytes(tag));
        if (intStamping && FrameTag.mayCarryOptions(tag)) {
            stampInt(packet, queueBytesLeft, txBytes, nowNs);
        }
        boolean control = FrameTag.control(tag);
        if (faultFree) {
            queue.onFaultFreeDeparture(control);
            wire.onFrame(packet, tag, nowNs);
            return;
        }
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
        if (pfc != null) {
            timers.cancel(pfc.pauseTimer);
            pfc.pauseTimer = TimerService.NO_TIMER;
        }
        if (direct) {
            int held = flightCount + queue.queuedPackets();
            for (int i = 0; i < held; i++) {
                int j = (ringHead + i) & (ring.length - 1);
                if (ring[j] != null) { // closed before: the queue still counts them
                    ring[j].release();
                    ring[j] = null;
                }
            }
            flightCount = 0;
        } else {
            queue.releaseAll();
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
