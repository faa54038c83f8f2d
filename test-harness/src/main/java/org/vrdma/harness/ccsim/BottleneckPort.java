package org.vrdma.harness.ccsim;

import java.util.ArrayDeque;
import java.util.random.RandomGenerator;
import org.HdrHistogram.Histogram;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.cc.switching.IntPort;
import org.vrdma.cc.switching.TailDrop;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;
import org.vrdma.runtime.VirtualTimeScheduler;

/**
 * The shared egress port of the dumbbell: a FIFO with tail drop and RED/ECN marking at enqueue, a
 * link that serialises packets with picosecond accuracy, and INT stamping at dequeue.
 */
final class BottleneckPort implements TimerHandler {
    private final VirtualTimeScheduler scheduler;
    private final DumbbellConfig config;
    private final EgressAdmission admission;
    private final IntPort intPort;
    private final RandomGenerator random;
    private final ArrayDeque<SimPacket> queue = new ArrayDeque<>();
    private final Histogram queueHistogram = new Histogram(3);
    private long queueBytes;
    private long maxQueueBytes;
    private long freePs;
    private SimPacket inService;
    private long drops;
    private long marks;

    BottleneckPort(final VirtualTimeScheduler scheduler, final DumbbellConfig config) {
        this.scheduler = scheduler;
        this.config = config;
        this.admission = new EgressAdmission(new TailDrop(config.bufferBytes()), config.marker());
        this.intPort = new IntPort(config.lineRateBps());
        this.random = scheduler.random("bottleneck-ecn");
    }

    void onArrival(final long nowNs, final SimPacket packet) {
        queueHistogram.recordValue(queueBytes);
        final int verdict = admission.onArrival(queueBytes, packet.bytes, true, random);
        if (verdict == EgressAdmission.DROP) {
            drops++;
            return;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE) {
            packet.ce = true;
            marks++;
        }
        queue.addLast(packet);
        queueBytes += packet.bytes;
        maxQueueBytes = Math.max(maxQueueBytes, queueBytes);
        if (inService == null) {
            startNext(nowNs);
        }
    }

    @Override
    public void onTimer(final long nowNs, final long timerId) {
        final SimPacket packet = inService;
        inService = null;
        scheduler.scheduleAt(
                nowNs + config.linkDelayNs(), (t, id) -> packet.flow.receiver().onPacket(t, packet));
        if (!queue.isEmpty()) {
            startNext(nowNs);
        }
    }

    private void startNext(final long nowNs) {
        final SimPacket packet = queue.pollFirst();
        queueBytes -= packet.bytes;
        inService = packet;
        // INT is stamped as the packet is dequeued for transmission (the egress pipeline of a switch,
        // SwitchNotifyDequeue in the HPCC simulator): the queue left behind it, the bytes this port
        // started sending before it, and the time it starts.
        if (packet.telemetry == null) {
            packet.telemetry = new IntTelemetry();
        }
        intPort.stamp(packet.telemetry, nowNs, queueBytes);
        intPort.onTransmit(packet.bytes);
        freePs = Math.max(freePs, nowNs * 1_000L) + packet.bytes * 8_000_000_000_000L / config.lineRateBps();
        final long doneNs = Math.ceilDiv(freePs, 1_000L);
        final long id = scheduler.scheduleAt(doneNs, this);
        assert id != TimerService.NO_TIMER;
    }

    long drops() {
        return drops;
    }

    long marks() {
        return marks;
    }

    long maxQueueBytes() {
        return maxQueueBytes;
    }

    long queuePercentileBytes(final double percentile) {
        return queueHistogram.getTotalCount() == 0 ? 0 : queueHistogram.getValueAtPercentile(percentile);
    }

    void resetQueueStatistics() {
        queueHistogram.reset();
        maxQueueBytes = queueBytes;
    }
}
