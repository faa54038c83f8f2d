package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.random.RandomGenerator;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.cc.switching.TailDrop;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.InnerFrame;
import org.vrdma.vswitch.pipeline.IntOption;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.wire.Ipv4UdpHeaders;

/**
 * An egress port of a fabric switch, with the same model as the vswitch {@code EgressPort} (a FIFO
 * drained at the link rate in picoseconds with the remainder carried, tail drop, RED/ECN marking at
 * arrival, INT stamping at departure, seeded data and control faults as packets leave, from the
 * same named random streams), working on tagged frames: length, ECN, control and the IPv4 header's
 * place come from the {@link FrameTag}, so a packet crossing the port costs no read of its memory.
 * Departing packets go to a {@link Wire}; those a fault delays wait in a small heap first (equal
 * delays keep their order). Allocates nothing per packet once its rings have grown.
 */
final class FabricPort implements TimerHandler {
    private static final long PS_PER_SECOND = 1_000_000_000_000L;

    private final String name;
    private final TimerService timers;
    private final RandomGenerator markRandom;
    private final FaultInjector dataFaults;
    private final FaultInjector controlFaults;
    private final TaggedSink output;
    private final EgressConfig config;
    private final EgressAdmission admission;
    private final long rateBps;
    private final Delayed delayed;

    private ByteBuf[] ring = new ByteBuf[64];
    private long[] tags = new long[64];
    private int head;
    private int count;
    private long queuedBytes;
    private long headDonePs;
    private long lastDonePs;
    private long carry;
    private long armedTimer = TimerService.NO_TIMER;

    private long txPackets;
    private long txBytes;
    private long bufferDrops;
    private long ecnMarked;
    private long dataLost;
    private long controlLost;

    FabricPort(String name, TimerService timers, EgressConfig config, SeededRandoms randoms, TaggedSink output) {
        this.name = name;
        this.timers = timers;
        this.output = output;
        this.config = config;
        this.rateBps = config.rateBps();
        this.markRandom = randoms.stream(name + ":ecn");
        this.dataFaults = new FaultInjector(config.dataFaults(), randoms.stream(name + ":faults:data"));
        this.controlFaults = new FaultInjector(config.controlFaults(), randoms.stream(name + ":faults:control"));
        this.admission = new EgressAdmission(new TailDrop(config.bufferBytes()), config.ecnMarker());
        this.delayed = new Delayed();
        this.lastDonePs = timers.nowNs() * 1000;
    }

    String name() {
        return name;
    }

    /** Queues a tagged packet; the port owns it from here on. */
    void offer(ByteBuf packet, long tag) {
        int bytes = FrameTag.bytes(tag);
        int verdict = admission.onArrival(queuedBytes, bytes, FrameTag.ecnCapable(tag), markRandom);
        if (verdict == EgressAdmission.DROP) {
            bufferDrops++;
            packet.release();
            return;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE && FrameTag.ecn(tag) != Ipv4UdpHeaders.CE) {
            InnerFrame.markCe(packet, packet.readerIndex() + FrameTag.ipOffset(tag), FrameTag.ipHeaderBytes(tag));
            tag = FrameTag.withCe(tag);
            ecnMarked++;
        }
        long nowNs = timers.nowNs();
        if (rateBps == 0 && count == 0) {
            depart(packet, tag, nowNs, 0);
            return;
        }
        if (count == ring.length) {
            grow();
        }
        int tail = (head + count) & (ring.length - 1);
        ring[tail] = packet;
        tags[tail] = tag;
        count++;
        queuedBytes += bytes;
        if (count == 1) {
            long startPs = Math.max(lastDonePs, nowNs * 1000);
            if (startPs > lastDonePs) {
                carry = 0; // the link was idle: a new busy period starts now
            }
            headDonePs = startPs + nextSerialisationPs(bytes);
            armedTimer = timers.scheduleAt(ceilDivBy1000(headDonePs), this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        if (timerId != armedTimer) {
            return;
        }
        armedTimer = TimerService.NO_TIMER;
        long nowPs = nowNs * 1000;
        while (count > 0 && headDonePs <= nowPs) {
            ByteBuf packet = ring[head];
            long tag = tags[head];
            ring[head] = null;
            head = (head + 1) & (ring.length - 1);
            count--;
            queuedBytes -= FrameTag.bytes(tag);
            lastDonePs = headDonePs;
            depart(packet, tag, nowNs, queuedBytes);
            if (count > 0) {
                headDonePs = lastDonePs + nextSerialisationPs(FrameTag.bytes(tags[head]));
            }
        }
        if (count > 0) {
            armedTimer = timers.scheduleAt(ceilDivBy1000(headDonePs), this);
        }
    }

    private void depart(ByteBuf packet, long tag, long nowNs, long queueBytesLeft) {
        txPackets++;
        txBytes += FrameTag.bytes(tag);
        if (config.intStamping()) {
            int start = packet.readerIndex();
            int data = IntOption.find(packet, start + UnderlayPort.OUTER_HEADERS_BYTES, packet.writerIndex());
            if (data >= 0) {
                IntOption.stamp(packet, data, queueBytesLeft, txBytes, nowNs, rateBps);
            }
        }
        boolean control = FrameTag.control(tag);
        FaultInjector faults = control ? controlFaults : dataFaults;
        int verdict = faults.judge();
        if (verdict == FaultInjector.DELIVER && delayed.size == 0) {
            long delayNs = faults.delayNs();
            if (delayNs == 0) {
                output.onFrame(packet, tag, nowNs);
            } else {
                delayed.add(packet, tag, delayNs);
            }
            return;
        }
        if (verdict == FaultInjector.DROP) {
            if (control) {
                controlLost++;
            } else {
                dataLost++;
            }
            packet.release();
            return;
        }
        if (verdict == FaultInjector.DUPLICATE) {
            // A real copy: the receiver rewrites headers in place.
            deliver(packet.copy(), tag, faults.duplicateDelayNs(), nowNs);
        }
        deliver(packet, tag, faults.delayNs(), nowNs);
    }

    private void deliver(ByteBuf packet, long tag, long delayNs, long nowNs) {
        if (delayNs == 0 && delayed.size == 0) {
            output.onFrame(packet, tag, nowNs);
        } else {
            // Once anything is held, everything waits in the heap so equal delays keep their order.
            delayed.add(packet, tag, delayNs);
        }
    }

    /** Serialisation time of the next packet in picoseconds, carrying the remainder. */
    private long nextSerialisationPs(long bytes) {
        if (rateBps == 0) {
            return 0;
        }
        long bits = bytes * 8;
        long units = bits * PS_PER_SECOND + carry;
        carry = units % rateBps;
        return units / rateBps;
    }

    private static long ceilDivBy1000(long ps) {
        return -Math.floorDiv(-ps, 1000L);
    }

    /** Releases every queued and delayed packet and cancels the timers. */
    void close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        while (count > 0) {
            ring[head].release();
            ring[head] = null;
            head = (head + 1) & (ring.length - 1);
            count--;
        }
        queuedBytes = 0;
        delayed.close();
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

    long txPackets() {
        return txPackets;
    }

    long bufferDrops() {
        return bufferDrops;
    }

    long ecnMarked() {
        return ecnMarked;
    }

    long dataLost() {
        return dataLost;
    }

    long controlLost() {
        return controlLost;
    }

    long queuedBytes() {
        return queuedBytes;
    }

    /**
     * Packets a fault delays (delay, jitter, reordering), released in order of release time, then
     * of arrival: a binary heap over parallel arrays with one armed timer.
     */
    private final class Delayed implements TimerHandler {
        private ByteBuf[] frames = new ByteBuf[16];
        private long[] frameTags = new long[16];
        private long[] releaseNs = new long[16];
        private long[] sequence = new long[16];
        private int size;
        private long nextSequence;
        private long timer = TimerService.NO_TIMER;
        private long timerDeadlineNs = Long.MAX_VALUE;

        void add(ByteBuf frame, long tag, long delayNs) {
            if (size == frames.length) {
                frames = Arrays.copyOf(frames, size * 2);
                frameTags = Arrays.copyOf(frameTags, size * 2);
                releaseNs = Arrays.copyOf(releaseNs, size * 2);
                sequence = Arrays.copyOf(sequence, size * 2);
            }
            long at = timers.nowNs() + delayNs;
            int i = size++;
            frames[i] = frame;
            frameTags[i] = tag;
            releaseNs[i] = at;
            sequence[i] = nextSequence++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!before(i, parent)) {
                    break;
                }
                swap(i, parent);
                i = parent;
            }
            if (at < timerDeadlineNs) {
                timers.cancel(timer);
                timerDeadlineNs = at;
                timer = timers.scheduleAt(at, this);
            }
        }

        @Override
        public void onTimer(long nowNs, long timerId) {
            timer = TimerService.NO_TIMER;
            timerDeadlineNs = Long.MAX_VALUE;
            while (size > 0 && releaseNs[0] <= nowNs) {
                ByteBuf frame = frames[0];
                long tag = frameTags[0];
                removeHead();
                output.onFrame(frame, tag, nowNs);
            }
            if (size > 0 && releaseNs[0] < timerDeadlineNs) {
                timerDeadlineNs = releaseNs[0];
                timer = timers.scheduleAt(timerDeadlineNs, this);
            }
        }

        void close() {
            timers.cancel(timer);
            timer = TimerService.NO_TIMER;
            timerDeadlineNs = Long.MAX_VALUE;
            for (int i = 0; i < size; i++) {
                frames[i].release();
                frames[i] = null;
            }
            size = 0;
        }

        private boolean before(int a, int b) {
            return releaseNs[a] < releaseNs[b] || (releaseNs[a] == releaseNs[b] && sequence[a] < sequence[b]);
        }

        private void swap(int a, int b) {
            ByteBuf f = frames[a];
            frames[a] = frames[b];
            frames[b] = f;
            long t = frameTags[a];
            frameTags[a] = frameTags[b];
            frameTags[b] = t;
            long r = releaseNs[a];
            releaseNs[a] = releaseNs[b];
            releaseNs[b] = r;
            long s = sequence[a];
            sequence[a] = sequence[b];
            sequence[b] = s;
        }

        private void removeHead() {
            size--;
            frames[0] = null;
            if (size == 0) {
                return;
            }
            swap(0, size);
            frames[size] = null;
            int i = 0;
            while (true) {
                int child = 2 * i + 1;
                if (child >= size) {
                    return;
                }
                if (child + 1 < size && before(child + 1, child)) {
                    child++;
                }
                if (!before(child, i)) {
                    return;
                }
                swap(i, child);
                i = child;
            }
        }
    }
}
