package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Objects;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.LinkStateListener;
import org.vrdma.runtime.TimerService;
import org.vrdma.vnic.memory.MemoryRegionBacking;
import org.vrdma.vnic.transport.LateAnswers;
import org.vrdma.vnic.transport.PacketCodec;
import org.vrdma.vnic.transport.RtoEstimator;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;

/**
 * A virtual RDMA device: the vNIC of one ENI. It owns the tables of queue pairs and memory regions,
 * turns outgoing packets into frames for its {@link FrameSink} and dispatches received frames to
 * queue pairs.
 *
 * <h2>How a driver runs it</h2>
 *
 * <ul>
 *   <li>Everything happens on one thread: verbs calls, {@link #onFrame} and the timers of the
 *       {@link TimerService} the device was built with.
 *   <li>Inputs: verbs calls (posting work requests sends packets before it returns), {@link
 *       #onFrame} for every received frame (the device takes ownership and releases it), timer
 *       expiries.
 *   <li>Outputs: frames handed to the sink (the sink owns and releases them), completions in
 *       completion queues, events on channels and to the {@link AsyncEventHandler}.
 *   <li>A sink must not deliver frames back into a device synchronously; it queues them (a link, an
 *       event loop) so that no engine re-enters itself.
 * </ul>
 */
public final class Device implements FrameSink, LinkStateListener {
    /** QPN of the first queue pair; 0 and 1 are the special QPs of InfiniBand. */
    public static final int FIRST_QPN = 0x11;
    /** The number of the device's only port (the source of port events). */
    public static final Integer PORT_NUM = 1;

    enum Resource {
        PD,
        CQ,
        QP,
        MR,
        SRQ,
        AH,
        MW
    }

    private final String name;
    private final DeviceAttributes attributes;
    private final TransportConfig config;
    private final int ipv4;
    private final long mac;
    private final TimerService timers;
    private final PacketCodec codec;
    private final ByteBufAllocator allocator;
    private final ByteBufAllocator frameAllocator;
    private final FrameSink sink;

    private final int[] resourceCounts = new int[Resource.values().length];
    private final MemoryRegion[] mrTable;
    private final byte[] mrGeneration;
    private int mrHint;
    /** Memory windows: their keys' indexes follow the regions' ({@code mrTable.length + i}). */
    private final MemoryWindow[] mwTable;

    private final byte[] mwGeneration;
    private int mwHint;
    private final QueuePair[] qpTable;
    private int qpHint;

    private final TransportCounters deviceCounters = new TransportCounters();
    private final TransportCounters retiredQpCounters = new TransportCounters();
    private final TransportPacket rxPacket = new TransportPacket();
    private final TransportPacket txPacket = new TransportPacket();
    /**
     * Round trips measured by any of this device's QPs: a new QP's first timeout starts from it
     * when that is longer than the configured initial RTO, so a connection per flow on a slow path
     * does not time out spuriously before its own first sample.
     */
    private final RtoEstimator pathRtt;
    /** How late answers come with nothing lost, learnt by any of this device's QPs. */
    private final LateAnswers lateAnswers = new LateAnswers();

    private final ByteBuf scratch;
    private final int headroomBytes;
    private AsyncEventHandler asyncHandler;
    /** The port's link: down, frames are neither sent nor taken (the ENI's vRDMA is off, the host stops). */
    private boolean portActive = true;

    private int contexts;
    private boolean closed;

    private Device(final Builder b) {
        this.name = b.name;
        this.attributes = b.attributes;
        this.config = b.config;
        this.pathRtt = new RtoEstimator(b.config.initialRtoNs(), b.config.minRtoNs(), Long.MAX_VALUE / 4);
        this.ipv4 = b.ipv4;
        this.mac = b.mac;
        this.timers = Objects.requireNonNull(b.timers, "timers");
        this.codec = Objects.requireNonNull(b.codec, "codec");
        this.allocator = Objects.requireNonNull(b.allocator, "allocator");
        this.frameAllocator = b.frameAllocator != null ? b.frameAllocator : allocator;
        this.sink = Objects.requireNonNull(b.sink, "sink");
        this.headroomBytes = b.headroomBytes;
        this.mrTable = new MemoryRegion[attributes.maxMr()];
        this.mrGeneration = new byte[attributes.maxMr()];
        this.mwTable = new MemoryWindow[attributes.maxMw()];
        this.mwGeneration = new byte[attributes.maxMw()];
        this.qpTable = new QueuePair[attributes.maxQp()];
        this.scratch = allocator.directBuffer(attributes.maxMtu().bytes() + 64);
    }

    /** Starts building a device. */
    public static Builder builder() {
        return new Builder();
    }

    /** Opens a context ({@code ibv_open_device}). */
    public Context open() {
        checkOpen();
        contexts++;
        return new Context(this);
    }

    /** Device attributes ({@code ibv_query_device}). */
    public DeviceAttributes attributes() {
        return attributes;
    }

    public String name() {
        return name;
    }

    /** The ENI's IPv4 address (big-endian int), the source of every packet. */
    public int ipv4() {
        return ipv4;
    }

    /** The ENI's MAC address. */
    public long mac() {
        return mac;
    }

    public TransportConfig config() {
        return config;
    }

    public TimerService timers() {
        return timers;
    }

    /** Installs the receiver of asynchronous events (or null to drop them). */
    public void asyncEventHandler(final AsyncEventHandler handler) {
        this.asyncHandler = handler;
    }

    /** Whether port 1 is active ({@code ibv_query_port} state ACTIVE, else DOWN). */
    public boolean portActive() {
        return portActive;
    }

    /**
     * Brings port 1's link up or down, as the vNIC's link follows its ENI: raises PORT_ACTIVE or
     * PORT_ERR (source: the port number) when the state changes. While the port is down the device
     * neither sends nor receives; RC QPs retry and fail with RETRY_EXC_ERR if it stays down, as
     * over a broken link.
     */
    public void portActive(final boolean active) {
        if (active == portActive || closed) {
            return;
        }
        portActive = active;
        raise(active ? AsyncEventType.PORT_ACTIVE : AsyncEventType.PORT_ERR, PORT_NUM);
    }

    /** The ENI this device sits on had its vRDMA switched on or off: the port follows. */
    @Override
    public void onLinkState(final boolean up) {
        portActive(up);
    }

    /** The live queue pair {@code qpNum}, or null. */
    public QueuePair queuePair(final int qpNum) {
        final int i = qpNum - FIRST_QPN;
        return i >= 0 && i < qpTable.length ? qpTable[i] : null;
    }

    /**
     * Handles one received frame and releases it: like every {@link FrameSink}, the device owns the
     * frame it is given. Payload is copied into registered memory before this returns.
     */
    @Override
    public void onFrame(final ByteBuf frame, final long nowNs) {
        try {
            receive(frame);
        } finally {
            frame.release();
        }
    }

    private void receive(final ByteBuf frame) {
        if (closed) {
            return;
        }
        if (!portActive) {
            deviceCounters.droppedPackets++;
            return;
        }
        final TransportPacket p = rxPacket.clear();
        if (!codec.decode(frame, p) || p.dstIpv4 != ipv4) {
            deviceCounters.droppedPackets++;
            return;
        }
        final QueuePair qp = queuePair(p.destQp);
        if (qp == null) {
            deviceCounters.droppedPackets++;
            return;
        }
        qp.onPacket(p, frame.readableBytes(), timers.nowNs());
    }

    /** Late answers seen by this device's QPs (see {@link LateAnswers}); engine use only. */
    LateAnswers lateAnswers() {
        return lateAnswers;
    }

    /** Round trips sampled by this device's QPs (see {@link #pathRtt}); engine use only. */
    RtoEstimator pathRtt() {
        return pathRtt;
    }

    /** Device-wide counters: its own drops plus every queue pair, live or destroyed. */
    public TransportCounters counters() {
        final TransportCounters sum = deviceCounters.snapshot();
        retiredQpCounters.addTo(sum);
        for (final QueuePair qp : qpTable) {
            if (qp != null) {
                qp.countersRef().addTo(sum);
            }
        }
        return sum;
    }

    /** Releases the device's buffers; EBUSY while contexts are open. */
    public void close() {
        checkOpen();
        if (contexts != 0) {
            throw new VerbsException(Errno.EBUSY, contexts + " contexts still open");
        }
        closed = true;
        scratch.release();
    }

    // ---- engine-facing helpers ----

    void raise(final AsyncEventType type, final Object source) {
        if (asyncHandler != null) {
            asyncHandler.onAsyncEvent(type, source);
        }
    }

    void onContextClosed() {
        contexts--;
    }

    void reserve(final Resource r) {
        final int max = switch (r) {
            case PD -> attributes.maxPd();
            case CQ -> attributes.maxCq();
            case QP -> attributes.maxQp();
            case MR -> attributes.maxMr();
            case SRQ -> attributes.maxSrq();
            case AH -> attributes.maxAh();
            case MW -> attributes.maxMw();
        };
        if (resourceCounts[r.ordinal()] >= max) {
            throw new VerbsException(Errno.ENOMEM, "device has no free " + r + " (max " + max + ")");
        }
        resourceCounts[r.ordinal()]++;
    }

    void release(final Resource r) {
        resourceCounts[r.ordinal()]--;
    }

    MemoryRegion registerMr(
            final ProtectionDomain pd,
            final MemoryRegionBacking backing,
            final long addr,
            final long length,
            final int access) {
        reserve(Resource.MR);
        for (int n = 0; n < mrTable.length; n++) {
            final int i = (mrHint + n) % mrTable.length;
            if (mrTable[i] == null) {
                mrGeneration[i]++;
                final int key = (i << 8) | (mrGeneration[i] & 0xFF);
                final MemoryRegion mr = new MemoryRegion(pd, backing, addr, length, access, key);
                mrTable[i] = mr;
                mrHint = i + 1;
                return mr;
            }
        }
        release(Resource.MR);
        throw new VerbsException(Errno.ENOMEM, "memory region table full");
    }

    void unregisterMr(final MemoryRegion mr) {
        final int i = mr.lkey() >>> 8;
        if (mrTable[i] == mr) {
            mrTable[i] = null;
            release(Resource.MR);
        }
    }

    /** The registered region with key {@code key}, or null. */
    MemoryRegion lookupMr(final int key) {
        final int i = key >>> 8;
        if (i >= mrTable.length) {
            return null;
        }
        final MemoryRegion mr = mrTable[i];
        return mr != null && mr.lkey() == key ? mr : null;
    }

    MemoryWindow registerMw(final ProtectionDomain pd, final int type) {
        reserve(Resource.MW);
        for (int n = 0; n < mwTable.length; n++) {
            final int i = (mwHint + n) % mwTable.length;
            if (mwTable[i] == null) {
                mwGeneration[i]++;
                final int key = ((mrTable.length + i) << 8) | (mwGeneration[i] & 0xFF);
                final MemoryWindow mw = new MemoryWindow(pd, type, key);
                mwTable[i] = mw;
                mwHint = i + 1;
                return mw;
            }
        }
        release(Resource.MW);
        throw new VerbsException(Errno.ENOMEM, "memory window table full");
    }

    void unregisterMw(final MemoryWindow mw) {
        final int i = mw.index() - mrTable.length;
        if (mwTable[i] == mw) {
            mwTable[i] = null;
            release(Resource.MW);
        }
    }

    /** The allocated window whose index {@code key} names (whatever its key byte), or null. */
    MemoryWindow lookupMw(final int key) {
        final int i = (key >>> 8) - mrTable.length;
        return i >= 0 && i < mwTable.length ? mwTable[i] : null;
    }

    /**
     * The region a remote access of {@code [va, va + len)} with {@code access} through {@code qp}
     * reaches with {@code rkey} (a region's key, or a bound window's), or null if the key does not
     * allow it. The caller checks the QP's own access flags.
     */
    MemoryRegion remoteRegion(final QueuePair qp, final int rkey, final long va, final long len, final int access) {
        final MemoryRegion mr = lookupMr(rkey);
        if (mr != null) {
            return mr.pd() == qp.pd() && AccessFlags.has(mr.access(), access) && mr.contains(va, len) ? mr : null;
        }
        final MemoryWindow mw = lookupMw(rkey);
        return mw != null && mw.matches(rkey) && mw.allows(qp, va, len, access) ? mw.mr() : null;
    }

    int allocateQpn(final QueuePair qp) {
        for (int n = 0; n < qpTable.length; n++) {
            final int i = (qpHint + n) % qpTable.length;
            if (qpTable[i] == null) {
                qpTable[i] = qp;
                qpHint = i + 1;
                return FIRST_QPN + i;
            }
        }
        throw new VerbsException(Errno.ENOMEM, "queue pair table full");
    }

    void releaseQpn(final QueuePair qp) {
        final int i = qp.qpNum() - FIRST_QPN;
        if (qpTable[i] == qp) {
            qpTable[i] = null;
            qp.countersRef().addTo(retiredQpCounters);
        }
    }

    TransportPacket txPacket() {
        return txPacket.clear();
    }

    /** The staging buffer for outgoing payload, emptied. */
    ByteBuf scratch() {
        return scratch.clear();
    }

    TransportCounters deviceCounters() {
        return deviceCounters;
    }

    /** Encodes and sends {@code p}; returns the frame's wire length. */
    int transmit(final TransportPacket p, final TransportCounters counters) {
        return transmit(encode(p), counters);
    }

    /**
     * Encodes {@code p} into a new frame; a payload source's error (a bad address) propagates and
     * nothing is sent.
     */
    ByteBuf encode(final TransportPacket p) {
        return codec.encode(p, frameAllocator, headroomBytes);
    }

    /** Sends a frame from {@link #encode}; returns its wire length. */
    int transmit(final ByteBuf frame, final TransportCounters counters) {
        final int bytes = frame.readableBytes();
        if (!portActive) {
            frame.release();
            deviceCounters.droppedPackets++;
            return bytes;
        }
        counters.txPackets++;
        counters.txBytes += bytes;
        sink.onFrame(frame, timers.nowNs());
        return bytes;
    }

    int frameLength(final int opcode, final int payloadBytes) {
        return codec.frameLength(opcode, payloadBytes);
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException(Errno.EINVAL, "device closed");
        }
    }

    /** Builds a {@link Device}. */
    public static final class Builder {
        private String name = "vrdma0";
        private DeviceAttributes attributes = DeviceAttributes.defaults();
        private TransportConfig config = TransportConfig.defaults();
        private int ipv4;
        private long mac;
        private TimerService timers;
        private PacketCodec codec;
        private ByteBufAllocator allocator = ByteBufAllocator.DEFAULT;
        private ByteBufAllocator frameAllocator;
        private FrameSink sink;
        private int headroomBytes;

        public Builder name(final String v) {
            name = v;
            return this;
        }

        public Builder attributes(final DeviceAttributes v) {
            attributes = v;
            return this;
        }

        public Builder config(final TransportConfig v) {
            config = v;
            return this;
        }

        /** The ENI's IPv4 address, big-endian. */
        public Builder ipv4(final int v) {
            ipv4 = v;
            return this;
        }

        public Builder mac(final long v) {
            mac = v;
            return this;
        }

        public Builder timers(final TimerService v) {
            timers = v;
            return this;
        }

        public Builder codec(final PacketCodec v) {
            codec = v;
            return this;
        }

        public Builder allocator(final ByteBufAllocator v) {
            allocator = v;
            return this;
        }

        /**
         * Where transmitted frames are allocated, default the {@link #allocator}: a sink that sends
         * frames as they are built may hand out the memory they leave from (a real-time underlay's
         * send arena), so the frame is never copied. Frames are asked for at their exact size.
         */
        public Builder frameAllocator(final ByteBufAllocator v) {
            frameAllocator = v;
            return this;
        }

        public Builder sink(final FrameSink v) {
            sink = v;
            return this;
        }

        /**
         * Free bytes to leave before every transmitted frame, so the sink (a vSwitch: its {@code
         * encapsulationHeadroomBytes()}) can prepend its overlay headers in place; default 0.
         */
        public Builder headroomBytes(final int v) {
            if (v < 0) {
                throw new IllegalArgumentException("headroomBytes must be >= 0");
            }
            headroomBytes = v;
            return this;
        }

        public Device build() {
            return new Device(this);
        }
    }
}
