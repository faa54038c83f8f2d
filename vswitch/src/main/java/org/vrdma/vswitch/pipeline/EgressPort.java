package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import java.math.BigInteger;
import java.util.random.RandomGenerator;
import org.vrdma.cc.switching.EgressAdmission;
import org.vrdma.cc.switching.TailDrop;
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
 * <p>Ownership: {@link #offer} takes the packet; it reaches the output (which then owns it) or is
 * released when dropped. At most one timer is pending for the queue, plus the delay line's one.
 * Confined to one thread.
 */
public final class EgressPort implements TimerHandler {
    private static final long PS_PER_SECOND = 1_000_000_000_000L;

    private static final byte FLAG_CONTROL = 1;

    private final String name;
    private final TimerService timers;
    private final RandomGenerator markRandom;
    private final FaultInjector dataFaults;
    private final FaultInjector controlFaults;
    private final DelayLine delayLine;
    private final FrameSink output;
    private final int geneveOffsetBytes;
    private final InnerFrame peek = new InnerFrame();

    private EgressConfig config;
    private EgressAdmission admission;

    private ByteBuf[] ring = new ByteBuf[64];
    private byte[] flags = new byte[64];
    private int head;
    private int count;
    private long queuedBytes;
    private long headDonePs;
    private long lastDonePs;
    /** Sub-picosecond remainder (in units of 1/rateBps ps) carried from packet to packet: no drift. */
    private long carry;

    private long armedTimer = TimerService.NO_TIMER;

    private long offeredPackets;
    private long txPackets;
    private long txBytes;
    private long bufferDrops;
    private long ecnMarked;
    private long intStamped;
    private long dataLost;
    private long controlLost;
    private long controlPackets;
    private long queueHighWaterBytes;

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
        this.markRandom = randoms.stream(name + ":ecn");
        this.dataFaults = new FaultInjector(config.dataFaults(), randoms.stream(name + ":faults:data"));
        this.controlFaults = new FaultInjector(config.controlFaults(), randoms.stream(name + ":faults:control"));
        this.delayLine = new DelayLine(timers, output);
        this.lastDonePs = timers.nowNs() * 1000;
        config(config);
    }

    public String name() {
        return name;
    }

    /** Applies a new configuration from the next arrival (rate: from the next packet to start). */
    public void config(EgressConfig config) {
        this.config = config;
        this.admission = new EgressAdmission(new TailDrop(config.bufferBytes()), config.ecnMarker());
        dataFaults.config(config.dataFaults());
        controlFaults.config(config.controlFaults());
    }

    public EgressConfig config() {
        return config;
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
        int verdict = admission.onArrival(queuedBytes, bytes, ecnCapable, markRandom);
        if (verdict == EgressAdmission.DROP) {
            bufferDrops++;
            packet.release();
            return false;
        }
        if (verdict == EgressAdmission.ENQUEUE_CE && peek.ecn != org.vrdma.wire.Ipv4UdpHeaders.CE) {
            InnerFrame.markCe(packet, peek.ipOffset, peek.ipHeaderBytes);
            ecnMarked++;
        }
        byte f = ip && peek.isControl() ? FLAG_CONTROL : 0;
        long nowNs = timers.nowNs();
        if (config.rateBps() == 0 && count == 0) {
            depart(packet, f, nowNs, 0);
            return true;
        }
        if (count == ring.length) {
            grow();
        }
        int tail = (head + count) & (ring.length - 1);
        ring[tail] = packet;
        flags[tail] = f;
        count++;
        queuedBytes += bytes;
        if (queuedBytes > queueHighWaterBytes) {
            queueHighWaterBytes = queuedBytes;
        }
        if (count == 1) {
            startHead(nowNs);
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

    private void startHead(long nowNs) {
        // A packet that waited starts when the previous one finished; one arriving at an idle link starts now.
        long startPs = Math.max(lastDonePs, nowNs * 1000);
        if (startPs > lastDonePs) {
            carry = 0; // the link was idle: a new busy period starts now
        }
        headDonePs = startPs + nextSerialisationPs(ring[head].readableBytes());
        armedTimer = timers.scheduleAt(ceilDiv(headDonePs, 1000), this);
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
            byte f = flags[head];
            ring[head] = null;
            head = (head + 1) & (ring.length - 1);
            count--;
            queuedBytes -= packet.readableBytes();
            lastDonePs = headDonePs;
            depart(packet, f, nowNs, queuedBytes);
            if (count > 0) {
                headDonePs = lastDonePs + nextSerialisationPs(ring[head].readableBytes());
            }
        }
        if (count > 0) {
            armedTimer = timers.scheduleAt(ceilDiv(headDonePs, 1000), this);
        }
    }

    private void depart(ByteBuf packet, byte f, long nowNs, long queueBytesLeft) {
        int bytes = packet.readableBytes();
        txPackets++;
        txBytes += bytes;
        if (config.intStamping() && geneveOffsetBytes >= 0) {
            int start = packet.readerIndex();
            int data = IntOption.find(packet, start + geneveOffsetBytes, packet.writerIndex());
            if (data >= 0 && IntOption.stamp(packet, data, queueBytesLeft, txBytes, nowNs, config.rateBps())) {
                intStamped++;
            }
        }
        boolean control = (f & FLAG_CONTROL) != 0;
        if (control) {
            controlPackets++;
        }
        FaultInjector faults = control ? controlFaults : dataFaults;
        int verdict = faults.judge();
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

    /** Serialisation time of the next packet in picoseconds, carrying the remainder. */
    private long nextSerialisationPs(long bytes) {
        long rateBps = config.rateBps();
        long bits = bytes * 8;
        if (rateBps == 0) {
            return 0;
        }
        if (bits > (Long.MAX_VALUE - rateBps) / PS_PER_SECOND) {
            return serialisationPs(bytes);
        }
        long units = bits * PS_PER_SECOND + carry;
        carry = units % rateBps;
        return units / rateBps;
    }

    /** Serialisation time of {@code bytes} at the current rate, in picoseconds rounded up (0 when unlimited). */
    public long serialisationPs(long bytes) {
        long rateBps = config.rateBps();
        if (rateBps == 0) {
            return 0;
        }
        long bits = bytes * 8;
        if (bits <= Long.MAX_VALUE / PS_PER_SECOND) {
            return ceilDiv(bits * PS_PER_SECOND, rateBps);
        }
        return BigInteger.valueOf(bits)
                .multiply(BigInteger.valueOf(PS_PER_SECOND))
                .add(BigInteger.valueOf(rateBps - 1))
                .divide(BigInteger.valueOf(rateBps))
                .longValueExact();
    }

    /**
     * Releases every queued and delayed packet and cancels the timers.
     *
     * @return packets released from the queue
     */
    public int close() {
        timers.cancel(armedTimer);
        armedTimer = TimerService.NO_TIMER;
        int released = count;
        while (count > 0) {
            ring[head].release();
            ring[head] = null;
            head = (head + 1) & (ring.length - 1);
            count--;
        }
        queuedBytes = 0;
        delayLine.close();
        return released;
    }

    private void grow() {
        int n = ring.length;
        ByteBuf[] r = new ByteBuf[n * 2];
        byte[] fl = new byte[n * 2];
        for (int i = 0; i < count; i++) {
            r[i] = ring[(head + i) & (n - 1)];
            fl[i] = flags[(head + i) & (n - 1)];
        }
        ring = r;
        flags = fl;
        head = 0;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    public long offeredPackets() {
        return offeredPackets;
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

    public long ecnMarked() {
        return ecnMarked;
    }

    public long intStamped() {
        return intStamped;
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

    public FaultInjector dataFaults() {
        return dataFaults;
    }

    public FaultInjector controlFaults() {
        return controlFaults;
    }

    /** Packets held by the delay line (delay, jitter, reordering). */
    public int delayedPackets() {
        return delayLine.size();
    }
}
