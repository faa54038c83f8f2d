package org.vrdma.vswitch.qos;

import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;

/**
 * One direction of one ENI's QoS: a two-level token-bucket meter (ENI total, then the class
 * ceiling) in front of a deficit-round-robin scheduler over two class queues, so a burst of one
 * class cannot take the other's share while both are backlogged, and either may use all of the
 * ENI when alone. Non-conforming packets wait in their class queue (bounded) or, with a zero queue,
 * are dropped at once (policing).
 *
 * <p>Ownership: {@link #offer} takes the frame. {@link #PASS} hands it straight back to the caller;
 * a queued frame is later given to the {@link Output}, which then owns it; a dropped frame is
 * released here. One timer is armed at most. Confined to the switch's thread.
 */
public final class EniShaper implements TimerHandler {
    /** The frame conforms and nothing is queued: the caller keeps it and forwards it now. */
    public static final int PASS = 0;
    /** The frame waits in its class queue; the output gets it later. */
    public static final int QUEUED = 1;
    /** The frame was dropped and released (queue full, or policing). */
    public static final int DROPPED = 2;

    public static final int CLASSES = 2;
    /** Bytes of DRR credit per unit of weight per round. */
    static final int QUANTUM_BYTES_PER_WEIGHT = 4096;

    /** Receives frames that leave the queues. */
    @FunctionalInterface
    public interface Output {
        void onConforming(ByteBuf frame, int trafficClass, long nowNs);
    }

    private final TimerService timers;
    private final Output output;
    private final TokenBucket eniBucket;
    private final TokenBucket[] classBuckets = new TokenBucket[CLASSES];

    @SuppressWarnings("unchecked")
    private final ArrayDeque<ByteBuf>[] queues = new ArrayDeque[CLASSES];

    private final long[] queuedBytes = new long[CLASSES];
    private final long[] deficit = new long[CLASSES];
    private final boolean[] freshVisit = {true, true};
    private final int[] quantum = new int[CLASSES];
    private QosConfig config;
    private int roundRobin;
    private long armedTimer = TimerService.NO_TIMER;
    private long armedDeadlineNs = Long.MAX_VALUE;

    private final long[] passedPackets = new long[CLASSES];
    private final long[] passedBytes = new long[CLASSES];
    private final long[] queuedPackets = new long[CLASSES];
    private final long[] droppedPackets = new long[CLASSES];
    private final long[] droppedBytes = new long[CLASSES];
    private final long[] queueHighWaterBytes = new long[CLASSES];

    public EniShaper(TimerService timers, QosConfig config, Output output) {
        this.timers = timers;
        this.output = output;
        long nowNs = timers.nowNs();
        this.eniBucket = new TokenBucket(0, config.burstBytes(), nowNs);
        for (int c = 0; c < CLASSES; c++) {
            classBuckets[c] = new TokenBucket(0, config.burstBytes(), nowNs);
            queues[c] = new ArrayDeque<>(64);
        }
        config(config);
    }

    /** Applies a new configuration; queued frames stay queued (and leave at the new rates). */
    public void config(QosConfig config) {
        long nowNs = timers.nowNs();
        this.config = config;
        eniBucket.config(config.rateBps(), config.burstBytes(), nowNs);
        long eniRate = config.rateBps();
        classBuckets[0].config(ceiling(config.rdmaCeilBps(), eniRate), config.burstBytes(), nowNs);
        classBuckets[1].config(ceiling(config.tcpCeilBps(), eniRate), config.burstBytes(), nowNs);
        quantum[0] = config.rdmaWeight() * QUANTUM_BYTES_PER_WEIGHT;
        quantum[1] = config.tcpWeight() * QUANTUM_BYTES_PER_WEIGHT;
        if (queues[0].size() + queues[1].size() > 0) {
            drain(nowNs);
        }
    }

    private static long ceiling(long ceilBps, long eniRateBps) {
        if (eniRateBps == 0) {
            return ceilBps;
        }
        return ceilBps == 0 ? eniRateBps : Math.min(ceilBps, eniRateBps);
    }

    public QosConfig config() {
        return config;
    }

    /**
     * Meters a frame of class {@code trafficClass} (0 = RDMA, 1 = TCP/IP).
     *
     * @return {@link #PASS}, {@link #QUEUED} or {@link #DROPPED}
     */
    public int offer(ByteBuf frame, int trafficClass, long nowNs) {
        int bytes = frame.readableBytes();
        if (config.unlimited() && classBuckets[trafficClass].unlimited() && isEmpty()) {
            passedPackets[trafficClass]++;
            passedBytes[trafficClass] += bytes;
            return PASS;
        }
        eniBucket.refill(nowNs);
        TokenBucket classBucket = classBuckets[trafficClass];
        classBucket.refill(nowNs);
        if (isEmpty() && eniBucket.conforms(bytes) && classBucket.conforms(bytes)) {
            eniBucket.consume(bytes);
            classBucket.consume(bytes);
            passedPackets[trafficClass]++;
            passedBytes[trafficClass] += bytes;
            return PASS;
        }
        if (queuedBytes[trafficClass] + bytes > config.classQueueBytes()) {
            droppedPackets[trafficClass]++;
            droppedBytes[trafficClass] += bytes;
            frame.release();
            return DROPPED;
        }
        queues[trafficClass].addLast(frame);
        queuedPackets[trafficClass]++;
        long q = queuedBytes[trafficClass] += bytes;
        if (q > queueHighWaterBytes[trafficClass]) {
            queueHighWaterBytes[trafficClass] = q;
        }
        drain(nowNs);
        return QUEUED;
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        if (timerId != armedTimer) {
            return;
        }
        armedTimer = TimerService.NO_TIMER;
        armedDeadlineNs = Long.MAX_VALUE;
        drain(nowNs);
    }

    private void drain(long nowNs) {
        eniBucket.refill(nowNs);
        classBuckets[0].refill(nowNs);
        classBuckets[1].refill(nowNs);
        int stalls = 0;
        while (stalls < CLASSES && !isEmpty()) {
            int c = roundRobin;
            ArrayDeque<ByteBuf> queue = queues[c];
            if (queue.isEmpty()) {
                deficit[c] = 0;
                freshVisit[c] = true;
                roundRobin = c ^ 1;
                continue;
            }
            if (freshVisit[c]) {
                deficit[c] += quantum[c];
                freshVisit[c] = false;
            }
            ByteBuf head = queue.peekFirst();
            int bytes = head.readableBytes();
            if (bytes > deficit[c]) {
                freshVisit[c] = true;
                roundRobin = c ^ 1;
                continue;
            }
            if (!classBuckets[c].conforms(bytes)) {
                // This class is at its ceiling: the other may still send (work conserving).
                stalls++;
                roundRobin = c ^ 1;
                continue;
            }
            if (!eniBucket.conforms(bytes)) {
                break;
            }
            eniBucket.consume(bytes);
            classBuckets[c].consume(bytes);
            deficit[c] -= bytes;
            queue.pollFirst();
            queuedBytes[c] -= bytes;
            passedPackets[c]++;
            passedBytes[c] += bytes;
            stalls = 0;
            output.onConforming(head, c, nowNs);
        }
        if (!isEmpty()) {
            arm(nowNs + waitNs());
        }
    }

    private long waitNs() {
        long wait = Long.MAX_VALUE;
        for (int c = 0; c < CLASSES; c++) {
            ByteBuf head = queues[c].peekFirst();
            if (head != null) {
                int bytes = head.readableBytes();
                long w = Math.max(eniBucket.nanosUntilConforming(bytes), classBuckets[c].nanosUntilConforming(bytes));
                wait = Math.min(wait, w);
            }
        }
        return Math.max(1, wait);
    }

    private void arm(long deadlineNs) {
        if (armedTimer != TimerService.NO_TIMER) {
            if (armedDeadlineNs <= deadlineNs) {
                return;
            }
            timers.cancel(armedTimer);
        }
        armedDeadlineNs = deadlineNs;
        armedTimer = timers.scheduleAt(deadlineNs, this);
    }

    private boolean isEmpty() {
        return queues[0].isEmpty() && queues[1].isEmpty();
    }

    /**
     * Releases every queued frame and cancels the timer.
     *
     * @return the number of frames released
     */
    public int close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        armedDeadlineNs = Long.MAX_VALUE;
        int released = 0;
        for (int c = 0; c < CLASSES; c++) {
            ByteBuf f;
            while ((f = queues[c].pollFirst()) != null) {
                f.release();
                released++;
            }
            queuedBytes[c] = 0;
        }
        return released;
    }

    public long passedPackets(int trafficClass) {
        return passedPackets[trafficClass];
    }

    public long passedBytes(int trafficClass) {
        return passedBytes[trafficClass];
    }

    public long queuedPackets(int trafficClass) {
        return queuedPackets[trafficClass];
    }

    public long droppedPackets(int trafficClass) {
        return droppedPackets[trafficClass];
    }

    public long droppedBytes(int trafficClass) {
        return droppedBytes[trafficClass];
    }

    public long queuedBytes(int trafficClass) {
        return queuedBytes[trafficClass];
    }

    public long queueHighWaterBytes(int trafficClass) {
        return queueHighWaterBytes[trafficClass];
    }
}
