package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.runtime.DelayLine;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.wire.GeneveHeader;

/**
 * One emulated egress port: a FIFO drained at the link rate (serialisation accounted in picoseconds
 * with the remainder carried, back to back, so the k-th departure of a busy period is exactly
 * {@code k} serialisation times after its start, whatever the rate), a buffer with tail
 * drop, RED/ECN marking of ECN-capable packets at arrival (CE set in the inner IPv4 header, its
 * checksum rewritten), an INT hop record stamped into the Geneve {@link IntOption} at departure,
 * and seeded fault injection (loss, burst loss, duplication, delay, jitter, reordering) applied
 * separately to data and control packets as they leave. Every parameter can change at run time.
 *
 * <p>Used by the vSwitch uplink (packets are whole underlay frames) and by {@code FabricSwitch}
 * ports; {@code geneveOffsetBytes} says where the Geneve header sits from the reader index (-1:
 * the packet is a bare inner frame).
 *
 * <p>The queue's decisions (timing, admission, marking probability, fault draws) are the shared
 * {@link EgressQueue}; this port reads and rewrites the frame bytes and owns the timers.
 *
 * <p>Ownership: {@link #offer} takes the packet; it reaches the output (which then owns it) or is
 * released when dropped. At most one timer is pending for the queue, plus the delay line's one.
 * Confined to one thread.
 */
public final class EgressPort implements TimerHandler {
    private static final long FLAG_CONTROL = 1;

    private final String name;
    private final TimerService timers;
    private final EgressQueue queue;
    private final DelayLine delayLine;
    private final FrameSink output;
    private final int geneveOffsetBytes;
    private final InnerFrame peek = new InnerFrame();

    private long armedTimer = TimerService.NO_TIMER;

    private long offeredPackets;
    private long ecnMarked;
    private long intStamped;

    /**
     * @param randoms source of the port's seeded streams ({@code name + ":ecn"}, {@code ":faults:data"},
     *     {@code ":faults:control"})
     * @param output where departing packets go
     */
    public EgressPort(
            String name,
            TimerService timers,
            EgressConfig config,
            SeededRandoms randoms,
            int geneveOffsetBytes,
            FrameSink output) {
        this.name = name;
        this.timers = timers;
        this.output = output;
        this.geneveOffsetBytes = geneveOffsetBytes;
        this.queue = new EgressQueue(name, config, randoms, timers.nowNs());
        this.delayLine = new DelayLine(timers, output);
    }

    public String name() {
        return name;
    }

    /** Applies a new configuration from the next arrival (rate: from the next packet to start). */
    public void config(EgressConfig config) {
        queue.config(config);
    }

    public EgressConfig config() {
        return queue.config();
    }

    /**
     * Queues a packet; the port owns it from here on.
     *
     * @return false when it was dropped at arrival (buffer full) and released
     */
    public boolean offer(ByteBuf packet) {
        offeredPackets++;
        int bytes = packet.readableBytes();
        int start = packet.readerIndex();
        int end = packet.writerIndex();
        int inner = innerFrameIndex(packet, start, end);
        boolean ip = inner >= 0 && peek.peek(packet, inner, end);
        boolean ecnCapable = ip && peek.isEcnCapable();
        int verdict = queue.onArrival(bytes, ecnCapable);
        if (verdict == EgressAdmission.DROP) {
            packet.release();
            return false;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE && peek.ecn != org.vrdma.wire.Ipv4UdpHeaders.CE) {
            InnerFrame.markCe(packet, peek.ipOffset, peek.ipHeaderBytes);
            ecnMarked++;
        }
        long f = ip && peek.isControl() ? FLAG_CONTROL : 0;
        long nowNs = timers.nowNs();
        if (queue.cutsThrough()) {
            depart(packet, f, nowNs, 0);
            return true;
        }
        long deadlineNs = queue.enqueue(packet, f, bytes, nowNs);
        if (deadlineNs != EgressQueue.NO_DEADLINE) {
            armedTimer = timers.scheduleAt(deadlineNs, this);
        }
        return true;
    }

    private int innerFrameIndex(ByteBuf packet, int start, int end) {
        if (geneveOffsetBytes < 0) {
            return start;
        }
        int g = start + geneveOffsetBytes;
        if (end - g < GeneveHeader.BASE_HEADER_BYTES) {
            return -1;
        }
        return g + GeneveHeader.BASE_HEADER_BYTES + (packet.getUnsignedByte(g) & 0x3F) * 4;
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        if (timerId != armedTimer) {
            return;
        }
        armedTimer = TimerService.NO_TIMER;
        while (queue.headDoneBy(nowNs)) {
            ByteBuf packet = queue.headPacket();
            long f = queue.headTag();
            long left = queue.removeHead(packet.readableBytes());
            depart(packet, f, nowNs, left);
            if (queue.queuedPackets() > 0) {
                queue.startNextHead(queue.headPacket().readableBytes());
            }
        }
        if (queue.queuedPackets() > 0 && !queue.headHeld()) {
            armedTimer = timers.scheduleAt(queue.headDeadlineNs(), this);
        }
    }

    /**
     * Priority flow control: the frame being serialised finishes, then the port sends nothing until
     * {@link #resume()} (frames still queue, and tail-drop at the buffer).
     */
    public void pause() {
        queue.pause();
    }

    /** Ends a {@link #pause()}: the head of the queue starts serialising now. */
    public void resume() {
        if (queue.resume()) {
            armedTimer = timers.scheduleAt(queue.startHeadAt(queue.headPacket().readableBytes(), timers.nowNs()), this);
        }
    }

    public boolean paused() {
        return queue.paused();
    }

    private void depart(ByteBuf packet, long f, long nowNs, long queueBytesLeft) {
        long txBytes = queue.onTransmit(packet.readableBytes());
        if (queue.config().intStamping() && geneveOffsetBytes >= 0) {
            int start = packet.readerIndex();
            int data = IntOption.find(packet, start + geneveOffsetBytes, packet.writerIndex());
            if (data >= 0
                    && IntOption.stamp(
                            packet,
                            data,
                            queueBytesLeft,
                            txBytes,
                            nowNs,
                            queue.config().rateBps())) {
                intStamped++;
            }
        }
        boolean control = (f & FLAG_CONTROL) != 0;
        int verdict = queue.judge(control);
        if (verdict == FaultInjector.DROP) {
            packet.release();
            return;
        }
        FaultInjector faults = queue.faults(control);
        if (verdict == FaultInjector.DUPLICATE) {
            // A real copy: the receiver rewrites headers in place.
            deliver(packet.copy(), faults.duplicateDelayNs(), nowNs);
        }
        deliver(packet, faults.delayNs(), nowNs);
    }

    private void deliver(ByteBuf packet, long delayNs, long nowNs) {
        if (delayNs == 0 && delayLine.size() == 0) {
            output.onFrame(packet, nowNs);
        } else {
            // Once anything is held, everything passes the delay line so equal delays keep their order.
            delayLine.add(packet, delayNs);
        }
    }

    /** Serialisation time of {@code bytes} at the current rate, in picoseconds rounded up (0 when unlimited). */
    public long serialisationPs(long bytes) {
        return queue.serialisationPs(bytes);
    }

    /**
     * Releases every queued and delayed packet and cancels the timers.
     *
     * @return packets released from the queue
     */
    public int close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        int released = queue.releaseAll();
        delayLine.close();
        return released;
    }

    public long offeredPackets() {
        return offeredPackets;
    }

    public long txPackets() {
        return queue.txPackets();
    }

    public long txBytes() {
        return queue.txBytes();
    }

    public long bufferDrops() {
        return queue.bufferDrops();
    }

    public long ecnMarked() {
        return ecnMarked;
    }

    public long intStamped() {
        return intStamped;
    }

    public long dataLost() {
        return queue.dataLost();
    }

    public long controlLost() {
        return queue.controlLost();
    }

    /** Control packets that left the queue (before faults). */
    public long controlPackets() {
        return queue.controlPackets();
    }

    public long queuedBytes() {
        return queue.queuedBytes();
    }

    public int queuedPackets() {
        return queue.queuedPackets();
    }

    public long queueHighWaterBytes() {
        return queue.queueHighWaterBytes();
    }

    public FaultInjector dataFaults() {
        return queue.faults(false);
    }

    public FaultInjector controlFaults() {
        return queue.faults(true);
    }

    /** Packets held by the delay line (delay, jitter, reordering). */
    public int delayedPackets() {
        return delayLine.size();
    }
}
