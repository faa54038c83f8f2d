package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import java.util.random.RandomGenerator;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.runtime.LinkModel;
import org.vrdma.runtime.SeededRandoms;

/**
 * The model of one egress queue, without timers or packet parsing: a FIFO of packets with a 64-bit
 * tag each, drained at the link rate (serialisation in picoseconds with the remainder carried, so
 * the k-th departure of a busy period is exactly {@code k} serialisation times after its start),
 * admission with tail drop and RED/ECN marking, and the seeded data and control fault draws made
 * as packets leave, from the named streams {@code name + ":ecn"}, {@code ":faults:data"} and
 * {@code ":faults:control"}.
 *
 * <p>Priority flow control: {@link #pause()} lets the packet in service finish but starts no
 * other until {@link #resume()}; a packet queued meanwhile waits with its serialisation not yet
 * begun ({@link #headHeld()}), and starts when the caller calls {@link #startHeadAt}.
 *
 * <p>{@link EgressPort} (whole frames) and the virtual lab's fabric ports (tagged frames) both
 * drive it; they read the packet for ECN and control, rewrite CE and INT, and own the timers and
 * the output. Allocates nothing per packet once its ring has grown. Confined to one thread.
 */
public final class EgressQueue {
    private static final long PS_PER_SECOND = 1_000_000_000_000L;

    /** No timer is needed: the queue already had a head in service. */
    public static final long NO_DEADLINE = -1;

    /** {@code headDonePs} of a head that may not start: the port is paused. */
    private static final long HELD = Long.MAX_VALUE;

    private final RandomGenerator markRandom;
    private final FaultInjector dataFaults;
    private final FaultInjector controlFaults;

    private EgressConfig config;
    /** Admission's buffer and marker, kept here rather than in an {@link EgressAdmission} of their own. */
    private long bufferBytes;

    private RedEcnMarker marker;
    private long rateBps;

    private ByteBuf[] ring = new ByteBuf[64];
    private long[] tags = new long[64];
    private int head;
    private int count;
    private long queuedBytes;
    private long headDonePs;
    private long lastDonePs;
    /** Sub-picosecond remainder (in units of 1/rateBps ps) carried from packet to packet: no drift. */
    private long carry;
    /** PFC: no packet starts serialising. */
    private boolean paused;

    private long txPackets;
    private long txBytes;
    private long bufferDrops;
    private long dataLost;
    private long controlLost;
    private long controlPackets;
    private long queueHighWaterBytes;

    /**
     * @param name the port's name, prefix of its random streams
     * @param nowNs the time the link starts idle
     */
    public EgressQueue(String name, EgressConfig config, SeededRandoms randoms, long nowNs) {
        this.markRandom = randoms.stream(name + ":ecn");
        this.dataFaults = new FaultInjector(config.dataFaults(), randoms.stream(name + ":faults:data"));
        this.controlFaults = new FaultInjector(config.controlFaults(), randoms.stream(name + ":faults:control"));
        this.lastDonePs = nowNs * 1000;
        config(config);
    }

    /** Applies a new configuration from the next arrival (rate: from the next packet to start). */
    public void config(EgressConfig config) {
        this.config = config;
        this.rateBps = config.rateBps();
        this.bufferBytes = config.bufferBytes();
        this.marker = config.ecnMarker();
        dataFaults.config(config.dataFaults());
        controlFaults.config(config.controlFaults());
    }

    public EgressConfig config() {
        return config;
    }

    /**
     * Admission of an arriving packet of {@code bytes}: {@link EgressAdmission#DROP} (counted; the
     * caller releases it), {@link EgressAdmission#ENQUEUE} or {@link EgressAdmission#ENQUEUE_CE}.
     */
    public int onArrival(int bytes, boolean ecnCapable) {
        int verdict = EgressAdmission.decide(bufferBytes, marker, queuedBytes, bytes, ecnCapable, markRandom);
        if (verdict == EgressAdmission.DROP) {
            bufferDrops++;
        }
        return verdict;
    }

    /** True when an admitted packet leaves at once: an unlimited link with nothing queued, not paused. */
    public boolean cutsThrough() {
        return rateBps == 0 && count == 0 && !paused;
    }

    /**
     * Queues an admitted packet; the queue holds it until {@link #removeHead}.
     *
     * @return the time (ns) the new head finishes serialising when it starts service now (arm a
     *     timer for it), or {@link #NO_DEADLINE}
     */
    public long enqueue(ByteBuf packet, long tag, int bytes, long nowNs) {
        if (count == ring.length) {
            grow();
        }
        int tail = (head + count) & (ring.length - 1);
        ring[tail] = packet;
        tags[tail] = tag;
        return enqueueCounted(bytes, nowNs);
    }

    /**
     * As {@link #enqueue}, for a caller that keeps the queued packets and their tags itself, in
     * arrival order (then it takes the head off with {@link #removeCountedHead}, never {@link
     * #removeHead}, and reads neither {@link #headPacket} nor {@link #headTag}): the queue counts
     * the packet and its bytes and times its serialisation, without touching a ring of its own.
     */
    public long enqueueCounted(int bytes, long nowNs) {
        count++;
        queuedBytes += bytes;
        if (queuedBytes > queueHighWaterBytes) {
            queueHighWaterBytes = queuedBytes;
        }
        if (count != 1) {
            return NO_DEADLINE;
        }
        if (paused) {
            headDonePs = HELD;
            return NO_DEADLINE;
        }
        return startHeadAt(bytes, nowNs);
    }

    /**
     * Starts serialising the head (of {@code bytes}) now or, if the link is still busy with the
     * previous packet, when that one is done.
     *
     * @return the time (ns) it finishes serialising
     */
    public long startHeadAt(int bytes, long nowNs) {
        // A packet that waited starts when the previous one finished; one arriving at an idle link starts now.
        long startPs = Math.max(lastDonePs, nowNs * 1000);
        if (startPs > lastDonePs) {
            carry = 0; // the link was idle: a new busy period starts now
        }
        headDonePs = startPs + nextSerialisationPs(bytes);
        return ceilDiv(headDonePs, 1000);
    }

    /** True when a head packet has finished serialising by {@code nowNs}. */
    public boolean headDoneBy(long nowNs) {
        return count > 0 && headDonePs <= nowNs * 1000;
    }

    public ByteBuf headPacket() {
        return ring[head];
    }

    public long headTag() {
        return tags[head];
    }

    /**
     * Takes the finished head (of {@code bytes}) off the queue; read it first with {@link
     * #headPacket}.
     *
     * @return bytes still queued
     */
    public long removeHead(int bytes) {
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        return removeCountedHead(bytes);
    }

    /**
     * Takes the finished head (of {@code bytes}) off a queue whose packets the caller keeps (see
     * {@link #enqueueCounted}).
     *
     * @return bytes still queued
     */
    public long removeCountedHead(int bytes) {
        count--;
        queuedBytes -= bytes;
        lastDonePs = headDonePs;
        return queuedBytes;
    }

    /** Starts serialising the new head (of {@code bytes}) back to back after the last departure. */
    public void startNextHead(int bytes) {
        if (paused) {
            headDonePs = HELD;
            return;
        }
        headDonePs = lastDonePs + nextSerialisationPs(bytes);
    }

    /** PFC: finishes the packet in service, then starts no other until {@link #resume()}. */
    public void pause() {
        paused = true;
    }

    /**
     * PFC: lets packets start again.
     *
     * @return true when a held head must now be started with {@link #startHeadAt}
     */
    public boolean resume() {
        paused = false;
        return count > 0 && headDonePs == HELD;
    }

    public boolean paused() {
        return paused;
    }

    /** True when the head waits for the end of a pause, its serialisation not begun. */
    public boolean headHeld() {
        return count > 0 && headDonePs == HELD;
    }

    /** The time (ns, rounded up) the head packet finishes serialising. */
    public long headDeadlineNs() {
        return ceilDiv(headDonePs, 1000);
    }

    /**
     * Counts a departing packet of {@code bytes}.
     *
     * @return bytes sent so far, this one included
     */
    public long onTransmit(int bytes) {
        txPackets++;
        txBytes += bytes;
        return txBytes;
    }

    /**
     * Draws the fault verdict of a departing packet ({@link FaultInjector#DELIVER}, {@code DROP}
     * (counted; the caller releases it) or {@code DUPLICATE}); take its delays from {@link
     * #faults(boolean)}.
     */
    public int judge(boolean control) {
        if (control) {
            controlPackets++;
        }
        int verdict = faults(control).judge();
        if (verdict == FaultInjector.DROP) {
            if (control) {
                controlLost++;
            } else {
                dataLost++;
            }
        }
        return verdict;
    }

    /**
     * Counts a departing packet of a queue configured without faults, in place of {@link #judge}:
     * there is nothing to draw, and the fault injectors' state stays out of the CPU's caches.
     */
    public void onFaultFreeDeparture(boolean control) {
        if (control) {
            controlPackets++;
        }
    }

    public FaultInjector faults(boolean control) {
        return control ? controlFaults : dataFaults;
    }

    /** Serialisation time of the next packet in picoseconds, carrying the remainder. */
    private long nextSerialisationPs(long bytes) {
        if (rateBps == 0) {
            return 0;
        }
        long bits = bytes * 8;
        if (bits > (Long.MAX_VALUE - rateBps) / PS_PER_SECOND) {
            return serialisationPs(bytes);
        }
        long units = bits * PS_PER_SECOND + carry;
        carry = units % rateBps;
        return units / rateBps;
    }

    /** Serialisation time of {@code bytes} at the current rate, in picoseconds rounded up (0 when unlimited). */
    public long serialisationPs(long bytes) {
        return rateBps == 0 ? 0 : LinkModel.serialisationPs(bytes, rateBps);
    }

    /**
     * Releases every queued packet.
     *
     * @return packets released
     */
    public int releaseAll() {
        int released = count;
        while (count > 0) {
            ring[head].release();
            ring[head] = null;
            head = (head + 1) & (ring.length - 1);
            count--;
        }
        queuedBytes = 0;
        return released;
    }

    private void grow() {
        int n = ring.length;
        ByteBuf[] r = new ByteBuf[n * 2];
        long[] t = new long[n * 2];
        for (int i = 0; i < count; i++) {
            r[i] = ring[(head + i) & (n - 1)];
            t[i] = tags[(head + i) & (n - 1)];
        }
        ring = r;
        tags = t;
        head = 0;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    public long txPackets() {
        return txPackets;
    }

    public long txBytes() {
        return txBytes;
    }

    public long bufferDrops() {
        return bufferDrops;
    }

    public long dataLost() {
        return dataLost;
    }

    public long controlLost() {
        return controlLost;
    }

    /** Control packets that left the queue (before faults). */
    public long controlPackets() {
        return controlPackets;
    }

    public long queuedBytes() {
        return queuedBytes;
    }

    public int queuedPackets() {
        return count;
    }

    public long queueHighWaterBytes() {
        return queueHighWaterBytes;
    }
}
