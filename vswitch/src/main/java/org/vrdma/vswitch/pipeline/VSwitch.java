package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.LinkStateListener;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.qos.EniShaper;
import org.vrdma.vswitch.qos.QosConfig;
import org.vrdma.vswitch.wire.GeneveCodec;
import org.vrdma.vswitch.wire.GeneveDecodeStatus;
import org.vrdma.vswitch.wire.GeneveHeader;
import org.vrdma.vswitch.wire.GeneveOptionCursor;
import org.vrdma.wire.DecodeStatus;
import org.vrdma.wire.Ipv4UdpCodec;
import org.vrdma.wire.Ipv4UdpHeaders;

/**
 * The per-host software vSwitch: ENI ports, the VPC forwarding table, Geneve encapsulation (VNI =
 * VPC, outer UDP source port = flow hash for ECMP entropy) and decapsulation, isolation (a frame is
 * delivered only inside its VNI, from the host its source lives on), stateless security groups,
 * per-ENI QoS and the emulated uplink {@link EgressPort}. Sans-IO: inputs are {@link #onEniFrame}
 * and {@link #onUnderlayDatagram} (or {@link #onUnderlayFrame}); outputs go to the {@link
 * UnderlayPort} and to each ENI's {@link FrameSink}; time comes from the {@link TimerService}.
 *
 * <p><b>Ownership.</b> Every {@code onXxx} method takes the buffer it is given: the switch delivers
 * it onwards (the receiver then owns it) or releases it when it drops it. The switch may write into
 * an inner frame's headroom (the bytes before its reader index): with at least {@link
 * #encapsulationHeadroomBytes()} of headroom, encapsulation prepends the outer headers in place
 * and copies nothing; otherwise it copies the frame into a buffer from the allocator. Delivered
 * frames may be slices of a larger received buffer.
 *
 * <p><b>Errors.</b> Malformed, foreign or unwanted packets are dropped and counted under a {@link
 * DropReason} per switch, and per ENI and VPC where they are known; the data path never throws on
 * packet content.
 *
 * <p><b>Threading.</b> Confined to one thread (an event loop or the virtual-time scheduler),
 * configuration changes included. The hot path allocates nothing: lookups are primitive-keyed maps,
 * headers go through reusable holders.
 */
public final class VSwitch {
    /** A VPC as seen by this switch. */
    static final class Vpc {
        final int vni;
        final TrafficCounters counters = new TrafficCounters();
        int localEnis;

        Vpc(int vni) {
            this.vni = vni;
        }
    }

    /** A forwarding entry: a local ENI or a remote host. */
    private static final class Route {
        final Eni local;
        final long underlay;

        Route(Eni local, long underlay) {
            this.local = local;
            this.underlay = underlay;
        }
    }

    private static final class Host {
        int routes;
    }

    private static final int EPHEMERAL_PORT_BASE = 49152;

    /**
     * The MAC of the VPC's virtual router: the switch answers every ARP request for a routed VPC
     * address with it, and rewrites it to the destination ENI's MAC on delivery (locally
     * administered, "vr").
     */
    public static final long ROUTER_MAC = 0x02_76_72_00_00_01L;

    private final VSwitchConfig config;
    private final TimerService timers;
    private final ByteBufAllocator allocator;
    private final UnderlayPort underlay;
    private final EgressPort uplink;
    private final SeededRandoms randoms;

    private final IntObjectHashMap<Eni> enis = new IntObjectHashMap<>();
    private final IntObjectHashMap<Vpc> vpcs = new IntObjectHashMap<>();
    private final LongObjectHashMap<Route> routes = new LongObjectHashMap<>();
    private final LongObjectHashMap<Host> hosts = new LongObjectHashMap<>();

    /**
     * Receive cache, direct-mapped: (source host, VNI, inner source and destination) of datagrams
     * that passed the host, VNI and route checks, with their VPC and destination ENI, so a datagram
     * of a known conversation costs one probe instead of four map lookups. Keys: the source's
     * underlay address, the inner addresses, the VNI (a fourth long pads an entry to 32 bytes);
     * values: VPC and ENI, null when the entry is empty.
     */
    private static final int RX_CACHE_BITS = 6;

    private static final int RX_CACHE_STRIDE = 4;
    private final long[] rxCacheKeys = new long[(1 << RX_CACHE_BITS) * RX_CACHE_STRIDE];
    private final Object[] rxCacheValues = new Object[(1 << RX_CACHE_BITS) * RX_CACHE_STRIDE];

    private final InnerFrame inner = new InnerFrame();
    private final InnerFrame deliveryPeek = new InnerFrame();
    private final ArpPacket arp = new ArpPacket();
    private final GeneveHeader geneveTx = new GeneveHeader();
    private final GeneveHeader geneveRx = new GeneveHeader();
    private final GeneveOptionCursor optionCursor = new GeneveOptionCursor();
    private final Ipv4UdpHeaders outerTx = new Ipv4UdpHeaders();
    private final Ipv4UdpHeaders outerRx = new Ipv4UdpHeaders();
    private final IntTelemetry telemetry = new IntTelemetry();
    private final int geneveHeaderBytes;
    private final int headroomBytes;
    private final int localIpv4;
    private final int localPort;

    private final TrafficCounters counters = new TrafficCounters();
    private long underlayTxPackets;
    private long underlayTxBytes;
    private long underlayRxPackets;
    private long underlayRxBytes;
    private long localDeliveries;
    private long encapsulationCopies;
    private long arpReplies;

    private PacketCapture capture;
    private ByteBuf captureScratch;

    /**
     * @param allocator where encapsulation gets buffers for frames without headroom (pooled direct
     *     in real time)
     * @param underlay where underlay datagrams go
     */
    public VSwitch(VSwitchConfig config, TimerService timers, ByteBufAllocator allocator, UnderlayPort underlay) {
        this.config = config;
        this.timers = timers;
        this.allocator = allocator;
        this.underlay = underlay;
        this.localIpv4 = UnderlayAddress.ipv4(config.underlayAddress());
        this.localPort = UnderlayAddress.port(config.underlayAddress());
        if (config.intMaxHops() > 0) {
            IntOption.reserve(geneveTx, config.intMaxHops());
        }
        this.geneveHeaderBytes = geneveTx.headerLengthBytes();
        this.headroomBytes = UnderlayPort.OUTER_HEADERS_BYTES + geneveHeaderBytes;
        this.randoms = new SeededRandoms(config.seed());
        this.uplink = new EgressPort(
                config.name() + ":uplink",
                timers,
                config.uplink(),
                randoms,
                UnderlayPort.OUTER_HEADERS_BYTES,
                this::onUplinkDeparture);
    }

    public VSwitchConfig config() {
        return config;
    }

    /** Headroom an inner frame needs for encapsulation without a copy. */
    public int encapsulationHeadroomBytes() {
        return headroomBytes;
    }

    // ---------------------------------------------------------------- configuration

    /**
     * Attaches an ENI and adds its local route.
     *
     * @param sink receives the frames delivered to the ENI (and owns them); an {@link
     *     IntTelemetrySink} also gets INT records
     * @throws IllegalArgumentException if the id is taken or the address is already routed in the VPC
     */
    public Eni addEni(EniConfig eniConfig, FrameSink sink) {
        return addEni(eniConfig, sink, null);
    }

    /**
     * Attaches an ENI whose RoCEv2 frames go to {@code rdmaSink} (its vNIC) and whose other frames
     * (TCP/IP, ICMP, the switch's ARP answers) go to {@code ipSink} (e.g. a TAP device).
     *
     * @param ipSink null: {@code rdmaSink} receives everything
     */
    public Eni addEni(EniConfig eniConfig, FrameSink rdmaSink, FrameSink ipSink) {
        FrameSink sink = rdmaSink;
        if (enis.containsKey(eniConfig.id())) {
            throw new IllegalArgumentException("ENI id " + eniConfig.id() + " is attached already");
        }
        long key = routeKey(eniConfig.vni(), eniConfig.ipv4());
        if (routes.containsKey(key)) {
            throw new IllegalArgumentException("address " + UnderlayAddress.ipv4ToString(eniConfig.ipv4())
                    + " is routed in VNI " + eniConfig.vni() + " already");
        }
        Vpc vpc = vpc(eniConfig.vni());
        Eni eni = new Eni(eniConfig, vpc, sink);
        eni.ipSink = ipSink;
        eni.egressShaper = new EniShaper(
                timers, eniConfig.egressQos(), (frame, trafficClass, nowNs) -> onEgressConforming(eni, frame, nowNs));
        eni.ingressShaper = new EniShaper(
                timers,
                eniConfig.ingressQos(),
                (frame, trafficClass, nowNs) ->
                        deliver(eni, frame, nowNs, null, trafficClass == InnerFrame.CLASS_RDMA));
        enis.put(eni.id, eni);
        routes.put(key, new Route(eni, UnderlayAddress.NONE));
        vpc.localEnis++;
        clearRxCache();
        if (!eniConfig.rdmaEnabled() && sink instanceof LinkStateListener l) {
            l.onLinkState(false); // attached with vRDMA off: the vNIC's port starts down
        }
        return eni;
    }

    /**
     * Detaches an ENI: its route goes, frames queued in its meters are released (counted as {@link
     * DropReason#PORT_REMOVED}).
     *
     * @return false if no such ENI
     */
    public boolean removeEni(int eniId) {
        Eni eni = enis.remove(eniId);
        if (eni == null) {
            return false;
        }
        routes.remove(routeKey(eni.vni, eni.ipv4));
        eni.vpc.localEnis--;
        clearRxCache();
        int released = eni.egressShaper.close()
                + eni.ingressShaper.close()
                + (eni.deliveryPort == null ? 0 : eni.deliveryPort.close());
        for (int i = 0; i < released; i++) {
            countDrop(eni, eni.vpc, DropReason.PORT_REMOVED);
        }
        return true;
    }

    public Eni eni(int eniId) {
        return enis.get(eniId);
    }

    public List<Eni> enis() {
        return new ArrayList<>(enis.values());
    }

    /**
     * Routes {@code innerIpv4} of VPC {@code vni} to the host at {@code underlayAddress}, replacing a
     * remote route for it; the host becomes a known source.
     *
     * @throws IllegalArgumentException if the address is a local ENI's
     */
    public void addRemoteRoute(int vni, int innerIpv4, long underlayAddress) {
        long key = routeKey(vni, innerIpv4);
        Route old = routes.get(key);
        if (old != null && old.local != null) {
            throw new IllegalArgumentException(
                    "address " + UnderlayAddress.ipv4ToString(innerIpv4) + " belongs to local ENI " + old.local.id);
        }
        if (old != null) {
            releaseHost(old.underlay);
        }
        vpc(vni);
        routes.put(key, new Route(null, underlayAddress));
        Host host = hosts.get(hostKey(underlayAddress));
        if (host == null) {
            host = new Host();
            hosts.put(hostKey(underlayAddress), host);
        }
        host.routes++;
        clearRxCache();
    }

    public void addRemoteRoute(int vni, String innerIpv4, long underlayAddress) {
        addRemoteRoute(vni, UnderlayAddress.parseIpv4(innerIpv4), underlayAddress);
    }

    /** Removes a remote route; false if there is none (local routes go with their ENI). */
    public boolean removeRemoteRoute(int vni, int innerIpv4) {
        long key = routeKey(vni, innerIpv4);
        Route old = routes.get(key);
        if (old == null || old.local != null) {
            return false;
        }
        routes.remove(key);
        releaseHost(old.underlay);
        clearRxCache();
        return true;
    }

    private void releaseHost(long underlayAddress) {
        Host host = hosts.get(hostKey(underlayAddress));
        if (host != null && --host.routes == 0) {
            hosts.remove(hostKey(underlayAddress));
        }
    }

    public boolean isKnownHost(long underlayAddress) {
        return hosts.containsKey(hostKey(underlayAddress));
    }

    /**
     * Sends ENI {@code eniId}'s TCP/IP frames to {@code ipSink} from now on (null: back to the vNIC's
     * sink), e.g. when a TAP device starts backing it.
     */
    public void setIpSink(int eniId, FrameSink ipSink) {
        existing(eniId).ipSink = ipSink;
    }

    /**
     * Emulates the link toward ENI {@code eniId}'s vNIC or TAP with an {@link EgressPort}: rate,
     * buffer, RED/ECN and seeded faults (random stream {@code <switch>:eni<id>:delivery}), changeable
     * at run time like the uplink. Until the first call frames are handed over without a port.
     */
    public EgressPort setDeliveryPort(int eniId, EgressConfig egress) {
        Eni eni = existing(eniId);
        if (eni.deliveryPort == null) {
            eni.deliveryPort = new EgressPort(
                    config.name() + ":eni" + eniId + ":delivery",
                    timers,
                    egress,
                    randoms,
                    -1,
                    (frame, nowNs) -> onDeliveryDeparture(eni, frame, nowNs));
        } else {
            eni.deliveryPort.config(egress);
        }
        return eni.deliveryPort;
    }

    public void setSecurityGroup(int eniId, SecurityGroup group) {
        Eni eni = existing(eniId);
        eni.config = eni.config.withSecurityGroup(group);
    }

    /**
     * Lets RoCEv2 leave and reach ENI {@code eniId}, or not; a vNIC attached as the ENI's sink that
     * listens for its link ({@link LinkStateListener}) sees its port go up or down.
     */
    public void setRdmaEnabled(int eniId, boolean enabled) {
        Eni eni = existing(eniId);
        eni.config = eni.config.withRdmaEnabled(enabled);
        if (eni.sink instanceof LinkStateListener l) {
            l.onLinkState(enabled);
        }
    }

    public void setQos(int eniId, QosConfig egress, QosConfig ingress) {
        Eni eni = existing(eniId);
        eni.config = eni.config.withQos(egress, ingress);
        eni.egressShaper.config(egress);
        eni.ingressShaper.config(ingress);
    }

    /** Changes the uplink's rate, buffer, marking, INT or faults at run time. */
    public void setUplink(EgressConfig egress) {
        uplink.config(egress);
    }

    public EgressPort uplink() {
        return uplink;
    }

    /**
     * Whether a frame an ENI sends toward the underlay reaches {@link UnderlayPort#send} without
     * anything reading its payload on the way: no capture, and no fault that duplicates frames (a
     * duplicate is a copy). The underlay may then gather a frame's payload only when it sends it.
     */
    public boolean sendsFramesAsBuilt() {
        EgressConfig c = uplink.config();
        return capture == null
                && c.dataFaults().duplicateProbability() == 0
                && c.controlFaults().duplicateProbability() == 0;
    }

    /** Starts (or replaces) a capture; null stops it. */
    public void capture(PacketCapture packetCapture) {
        this.capture = packetCapture;
        if (packetCapture == null && captureScratch != null) {
            captureScratch.release();
            captureScratch = null;
        }
    }

    public boolean capturing() {
        return capture != null;
    }

    /** Releases everything queued and stops capturing. */
    public void close() {
        for (Eni eni : enis.values()) {
            eni.egressShaper.close();
            eni.ingressShaper.close();
            if (eni.deliveryPort != null) {
                eni.deliveryPort.close();
            }
        }
        uplink.close();
        capture(null);
    }

    private Eni existing(int eniId) {
        Eni eni = enis.get(eniId);
        if (eni == null) {
            throw new IllegalArgumentException("no ENI " + eniId);
        }
        return eni;
    }

    private Vpc vpc(int vni) {
        Vpc vpc = vpcs.get(vni);
        if (vpc == null) {
            vpc = new Vpc(vni);
            vpcs.put(vni, vpc);
            clearRxCache();
        }
        return vpc;
    }

    /**
     * The hosts map's key of an underlay address: a bijective mix, because the map folds a key's
     * two halves into its hash and addresses ({@code ipv4 << 16 | port}) of one /16 and port all
     * fold to the same low bits, which made every lookup a linear probe over all hosts.
     */
    private static long hostKey(long underlayAddress) {
        long x = underlayAddress * 0x9E37_79B9_7F4A_7C15L;
        return x ^ (x >>> 29);
    }

    private static long routeKey(int vni, int ipv4) {
        return ((long) vni << 32) | (ipv4 & 0xFFFF_FFFFL);
    }

    // ---------------------------------------------------------------- data path: from ENIs

    /** A frame from ENI {@code eniId}'s vNIC or TAP; the switch owns it from here on. */
    public void onEniFrame(int eniId, ByteBuf frame) {
        long nowNs = timers.nowNs();
        Eni eni = enis.get(eniId);
        if (eni == null) {
            drop(null, null, DropReason.UNKNOWN_ENI, frame);
            return;
        }
        if (capture != null) {
            capture.onPacket(CapturePoint.ENI_TX, frame, nowNs);
        }
        if (ArpPacket.isArp(frame, frame.readerIndex(), frame.writerIndex())) {
            onEniArp(eni, frame, nowNs);
            return;
        }
        DropReason bad = inner.parse(frame, frame.readerIndex(), frame.writerIndex());
        if (bad != null) {
            drop(eni, eni.vpc, bad, frame);
            return;
        }
        if (inner.srcMac != eni.mac || inner.srcIp != eni.ipv4) {
            drop(eni, eni.vpc, DropReason.SPOOFED_SOURCE, frame);
            return;
        }
        EniConfig c = eni.config;
        if (inner.roce && !c.rdmaEnabled()) {
            drop(eni, eni.vpc, DropReason.RDMA_DISABLED, frame);
            return;
        }
        if (!c.securityGroup().allowsEgress(inner.protocol, inner.dstPort, inner.dstIp)) {
            drop(eni, eni.vpc, DropReason.SECURITY_GROUP_DENY, frame);
            return;
        }
        int verdict = eni.egressShaper.offer(frame, inner.trafficClass(), nowNs);
        if (verdict == EniShaper.PASS) {
            forward(eni, frame, nowNs);
        } else if (verdict == EniShaper.DROPPED) {
            countDrop(eni, eni.vpc, DropReason.QOS_QUEUE_FULL);
        }
    }

    /**
     * Proxy ARP: a request from the ENI for an address routed in its VPC (local ENI or remote host)
     * is answered with {@link #ROUTER_MAC}; ARP never enters the overlay, so no VPC can see another's.
     */
    private void onEniArp(Eni eni, ByteBuf frame, long nowNs) {
        if (!arp.parse(frame, frame.readerIndex(), frame.writerIndex())) {
            drop(eni, eni.vpc, DropReason.MALFORMED_INNER, frame);
            return;
        }
        if (arp.ethSrcMac != eni.mac || arp.senderMac != eni.mac || (arp.senderIp != eni.ipv4 && arp.senderIp != 0)) {
            drop(eni, eni.vpc, DropReason.SPOOFED_SOURCE, frame);
            return;
        }
        if (arp.operation != ArpPacket.REQUEST || arp.isGratuitous() || arp.targetIp == eni.ipv4) {
            drop(eni, eni.vpc, DropReason.ARP_IGNORED, frame);
            return;
        }
        if (!routes.containsKey(routeKey(eni.vni, arp.targetIp))) {
            drop(eni, eni.vpc, DropReason.ARP_NO_ROUTE, frame);
            return;
        }
        frame.release();
        ByteBuf reply = allocator.directBuffer(ArpPacket.MIN_FRAME_BYTES);
        arp.writeReply(reply, ROUTER_MAC);
        arpReplies++;
        deliver(eni, reply, nowNs, null, false);
    }

    private void onEgressConforming(Eni eni, ByteBuf frame, long nowNs) {
        // The frame was validated on arrival; parse again to refill the holder it left.
        inner.parse(frame, frame.readerIndex(), frame.writerIndex());
        forward(eni, frame, nowNs);
    }

    /** Routes a validated frame the ENI sent ({@link #inner} holds its headers). */
    private void forward(Eni eni, ByteBuf frame, long nowNs) {
        eni.counters.onTx(frame.readableBytes());
        Route route = routes.get(routeKey(eni.vni, inner.dstIp));
        if (route == null) {
            drop(eni, eni.vpc, DropReason.NO_ROUTE, frame);
            return;
        }
        if (route.local != null) {
            localDeliveries++;
            underlay.completeFrame(frame);
            toEni(route.local, frame, nowNs, null);
            return;
        }
        encapsulate(eni, frame, route.underlay);
    }

    private void encapsulate(Eni eni, ByteBuf frame, long destination) {
        int innerBytes = frame.readableBytes();
        int headerBytes = headroomBytes;
        ByteBuf out;
        int start;
        if (frame.readerIndex() >= headerBytes && !frame.isReadOnly()) {
            out = frame;
            start = frame.readerIndex() - headerBytes;
        } else {
            encapsulationCopies++;
            out = allocator.directBuffer(headerBytes + innerBytes);
            out.writerIndex(headerBytes);
            out.writeBytes(frame, frame.readerIndex(), innerBytes);
            frame.release();
            start = 0;
        }
        int end = out.writerIndex();
        out.readerIndex(start);
        out.writerIndex(start);
        Ipv4UdpHeaders o = outerTx;
        o.srcMac = config.underlayMac();
        o.dstMac = config.gatewayMac();
        o.srcIp = localIpv4;
        o.dstIp = UnderlayAddress.ipv4(destination);
        o.udpSrcPort = flowEntropyPort(eni.vni);
        o.udpDstPort = UnderlayAddress.port(destination);
        Ipv4UdpCodec.encode(o, geneveHeaderBytes + innerBytes, out);
        geneveTx.vni = eni.vni;
        GeneveCodec.encode(geneveTx, out);
        out.writerIndex(end);
        eni.vpc.counters.onTx(innerBytes);
        uplink.offer(out);
    }

    /** Outer UDP source port from the inner 5-tuple and VNI, in the ephemeral range (RFC 8926). */
    private int flowEntropyPort(int vni) {
        long h = inner.srcIp * 0x9E37_79B9_7F4A_7C15L;
        h ^= (inner.dstIp & 0xFFFF_FFFFL) * 0xC2B2_AE3D_27D4_EB4FL;
        h ^= ((long) inner.protocol << 48) ^ ((long) inner.srcPort << 32) ^ ((long) inner.dstPort << 16) ^ vni;
        h ^= h >>> 31;
        h *= 0xBF58_476D_1CE4_E5B9L;
        h ^= h >>> 29;
        return EPHEMERAL_PORT_BASE + (int) (h & 0x3FFF);
    }

    private void onUplinkDeparture(ByteBuf frame, long nowNs) {
        if (capture != null) {
            capture.onPacket(CapturePoint.UNDERLAY_TX, frame, nowNs);
        }
        int start = frame.readerIndex();
        int ip = start + Ipv4UdpCodec.ETHERNET_HEADER_BYTES;
        long destination = UnderlayAddress.of(
                frame.getInt(ip + 16), frame.getUnsignedShort(ip + Ipv4UdpCodec.IPV4_HEADER_BYTES + 2));
        frame.readerIndex(start + UnderlayPort.OUTER_HEADERS_BYTES);
        underlayTxPackets++;
        underlayTxBytes += frame.readableBytes();
        underlay.send(frame, destination);
    }

    // ---------------------------------------------------------------- data path: from the underlay

    /**
     * A whole underlay frame (outer Ethernet/IPv4/UDP, Geneve, inner frame), as a virtual-time fabric
     * delivers it. In a fabric every host listens on the same UDP port, so the sender is taken to be
     * the outer source IPv4 address with the outer destination port; the outer source port carries
     * flow entropy.
     */
    public void onUnderlayFrame(ByteBuf frame) {
        outerRx.clear();
        DecodeStatus status = Ipv4UdpCodec.decode(frame, outerRx);
        if (status != DecodeStatus.OK) {
            underlayRxPackets++;
            underlayRxBytes += frame.readableBytes();
            drop(null, null, DropReason.MALFORMED_GENEVE, frame);
            return;
        }
        frame.writerIndex(outerRx.udpPayloadOffset + outerRx.udpPayloadBytes);
        frame.readerIndex(outerRx.udpPayloadOffset);
        onUnderlayDatagram(frame, UnderlayAddress.of(outerRx.srcIp, outerRx.udpDstPort));
    }

    /**
     * A UDP payload (Geneve header, options, inner frame) received from {@code
     * sourceUnderlayAddress}; the switch owns it from here on.
     */
    public void onUnderlayDatagram(ByteBuf datagram, long sourceUnderlayAddress) {
        long nowNs = timers.nowNs();
        underlayRxPackets++;
        underlayRxBytes += datagram.readableBytes();
        if (capture != null) {
            captureUnderlayRx(datagram, sourceUnderlayAddress, nowNs);
        }
        if (GeneveCodec.decode(datagram, geneveRx) == GeneveDecodeStatus.OK) {
            int hasTelemetry = readOptions();
            int innerStart = geneveRx.payloadOffset;
            int innerEnd = innerStart + geneveRx.payloadLengthBytes;
            if (hasTelemetry >= 0 && inner.parse(datagram, innerStart, innerEnd) == null) {
                int slot = rxCacheSlot(sourceUnderlayAddress, geneveRx.vni, inner.srcIp, inner.dstIp);
                Object[] values = rxCacheValues;
                long[] keys = rxCacheKeys;
                if (values[slot] != null
                        && keys[slot] == sourceUnderlayAddress
                        && keys[slot + 1] == rxCacheFlow(inner.srcIp, inner.dstIp)
                        && keys[slot + 2] == geneveRx.vni) {
                    accept(
                            (Vpc) values[slot],
                            (Eni) values[slot + 1],
                            datagram,
                            innerStart,
                            innerEnd,
                            hasTelemetry > 0,
                            nowNs);
                    return;
                }
            }
        }
        onUnderlayDatagramUncached(datagram, sourceUnderlayAddress, nowNs);
    }

    /**
     * The INT option into {@link #telemetry}: 1 if the datagram carries one, 0 if not, -1 for an
     * unknown critical option.
     */
    private int readOptions() {
        int hasTelemetry = 0;
        optionCursor.reset(geneveRx);
        while (optionCursor.next()) {
            if (IntOption.isIntOption(optionCursor)) {
                hasTelemetry = IntOption.read(optionCursor, telemetry) ? 1 : 0;
            } else if (optionCursor.isCritical()) {
                return -1;
            }
        }
        return hasTelemetry;
    }

    /** Index of the first of the receive cache's key (and value) fields for a datagram. */
    private static int rxCacheSlot(long sourceUnderlayAddress, int vni, int srcIp, int dstIp) {
        long x = (sourceUnderlayAddress ^ ((long) vni << 40) ^ rxCacheFlow(srcIp, dstIp)) * 0x9E37_79B9_7F4A_7C15L;
        return (int) (x >>> (64 - RX_CACHE_BITS)) * RX_CACHE_STRIDE;
    }

    private static long rxCacheFlow(int srcIp, int dstIp) {
        return ((long) srcIp << 32) | (dstIp & 0xFFFF_FFFFL);
    }

    /** Forgets the receive decisions: any change to ENIs, VPCs, routes or hosts may alter one. */
    private void clearRxCache() {
        Arrays.fill(rxCacheValues, null);
    }

    /**
     * The full receive path: every check in turn, each failure counted with its reason; a datagram
     * that passes leaves its decision in the receive cache.
     */
    private void onUnderlayDatagramUncached(ByteBuf datagram, long sourceUnderlayAddress, long nowNs) {
        GeneveDecodeStatus status = GeneveCodec.decode(datagram, geneveRx);
        if (status != GeneveDecodeStatus.OK) {
            drop(null, null, DropReason.MALFORMED_GENEVE, datagram);
            return;
        }
        if (!hosts.containsKey(hostKey(sourceUnderlayAddress))) {
            drop(null, null, DropReason.UNKNOWN_SOURCE_HOST, datagram);
            return;
        }
        Vpc vpc = vpcs.get(geneveRx.vni);
        if (vpc == null || vpc.localEnis == 0) {
            drop(null, null, DropReason.UNKNOWN_VNI, datagram);
            return;
        }
        boolean hasTelemetry = false;
        optionCursor.reset(geneveRx);
        while (optionCursor.next()) {
            if (IntOption.isIntOption(optionCursor)) {
                hasTelemetry = IntOption.read(optionCursor, telemetry);
            } else if (optionCursor.isCritical()) {
                drop(null, vpc, DropReason.UNKNOWN_CRITICAL_OPTION, datagram);
                return;
            }
        }
        int innerStart = geneveRx.payloadOffset;
        int innerEnd = innerStart + geneveRx.payloadLengthBytes;
        DropReason bad = inner.parse(datagram, innerStart, innerEnd);
        if (bad != null) {
            drop(null, vpc, bad, datagram);
            return;
        }
        Route source = routes.get(routeKey(geneveRx.vni, inner.srcIp));
        if (source == null || source.local != null || source.underlay != sourceUnderlayAddress) {
            drop(null, vpc, DropReason.SOURCE_HOST_MISMATCH, datagram);
            return;
        }
        Route target = routes.get(routeKey(geneveRx.vni, inner.dstIp));
        if (target == null || target.local == null) {
            drop(null, vpc, DropReason.NO_ROUTE, datagram);
            return;
        }
        int slot = rxCacheSlot(sourceUnderlayAddress, geneveRx.vni, inner.srcIp, inner.dstIp);
        rxCacheKeys[slot] = sourceUnderlayAddress;
        rxCacheKeys[slot + 1] = rxCacheFlow(inner.srcIp, inner.dstIp);
        rxCacheKeys[slot + 2] = geneveRx.vni;
        rxCacheValues[slot] = vpc;
        rxCacheValues[slot + 1] = target.local;
        accept(vpc, target.local, datagram, innerStart, innerEnd, hasTelemetry, nowNs);
    }

    private void accept(
            Vpc vpc, Eni eni, ByteBuf datagram, int innerStart, int innerEnd, boolean hasTelemetry, long nowNs) {
        if (inner.roce) {
            // A real-time underlay may pad datagrams to its GSO segment size; RoCE never carries
            // bytes after the IPv4 packet, so the vNIC gets the frame exactly.
            innerEnd = inner.ipOffset + inner.ipTotalBytes;
        }
        datagram.setIndex(innerStart, innerEnd);
        vpc.counters.onRx(innerEnd - innerStart);
        toEni(eni, datagram, nowNs, hasTelemetry ? telemetry : null);
    }

    /** Ingress checks and meter of the destination ENI ({@link #inner} holds the frame's headers). */
    private void toEni(Eni eni, ByteBuf frame, long nowNs, IntTelemetry intTelemetry) {
        EniConfig c = eni.config;
        if (inner.roce && !c.rdmaEnabled()) {
            drop(eni, eni.vpc, DropReason.RDMA_DISABLED, frame);
            return;
        }
        if (!c.securityGroup().allowsIngress(inner.protocol, inner.dstPort, inner.srcIp)) {
            drop(eni, eni.vpc, DropReason.SECURITY_GROUP_DENY, frame);
            return;
        }
        int trafficClass = inner.trafficClass();
        int verdict = eni.ingressShaper.offer(frame, trafficClass, nowNs);
        if (verdict == EniShaper.PASS) {
            deliver(eni, frame, nowNs, intTelemetry, trafficClass == InnerFrame.CLASS_RDMA);
        } else if (verdict == EniShaper.DROPPED) {
            countDrop(eni, eni.vpc, DropReason.QOS_QUEUE_FULL);
        }
    }

    /**
     * Counts and captures a frame for the ENI, then hands it over: through the delivery port when
     * one is configured (INT records are not carried across it), else at once.
     */
    private void deliver(Eni eni, ByteBuf frame, long nowNs, IntTelemetry intTelemetry, boolean rdma) {
        eni.counters.onRx(frame.readableBytes());
        if (capture != null) {
            capture.onPacket(CapturePoint.ENI_RX, frame, nowNs);
        }
        if (eni.deliveryPort != null) {
            eni.deliveryPort.offer(frame);
            return;
        }
        handOver(eni, frame, nowNs, intTelemetry, rdma);
    }

    private void onDeliveryDeparture(Eni eni, ByteBuf frame, long nowNs) {
        if (enis.get(eni.id) != eni) {
            drop(null, eni.vpc, DropReason.PORT_REMOVED, frame);
            return;
        }
        boolean rdma = deliveryPeek.peek(frame, frame.readerIndex(), frame.writerIndex())
                && deliveryPeek.protocol == InnerFrame.PROTOCOL_UDP
                && deliveryPeek.roce;
        handOver(eni, frame, nowNs, null, rdma);
    }

    /**
     * The last hop: RoCEv2 to the vNIC's sink, the rest to the TCP/IP sink when there is one. A frame
     * addressed to the virtual router (what proxy ARP told the sender) gets the ENI's MAC, as a
     * router writes the next hop's address.
     */
    private void handOver(Eni eni, ByteBuf frame, long nowNs, IntTelemetry intTelemetry, boolean rdma) {
        int start = frame.readerIndex();
        if (frame.readableBytes() >= InnerFrame.ETHERNET_HEADER_BYTES && ArpPacket.mac(frame, start) == ROUTER_MAC) {
            frame.setMedium(start, (int) (eni.mac >>> 24));
            frame.setMedium(start + 3, (int) eni.mac);
        }
        FrameSink sink = rdma || eni.ipSink == null ? eni.sink : eni.ipSink;
        if (intTelemetry != null && sink instanceof IntTelemetrySink intSink) {
            intSink.onFrame(frame, nowNs, intTelemetry);
        } else {
            sink.onFrame(frame, nowNs);
        }
    }

    private void captureUnderlayRx(ByteBuf datagram, long source, long nowNs) {
        int bytes = datagram.readableBytes();
        if (bytes > Ipv4UdpCodec.MAX_UDP_PAYLOAD_BYTES) {
            return;
        }
        if (captureScratch == null) {
            captureScratch = allocator.heapBuffer(2048);
        }
        ByteBuf scratch = captureScratch.clear();
        Ipv4UdpHeaders o = outerRx;
        o.clear();
        o.srcMac = config.gatewayMac();
        o.dstMac = config.underlayMac();
        o.srcIp = UnderlayAddress.ipv4(source);
        o.dstIp = localIpv4;
        o.udpSrcPort = UnderlayAddress.port(source);
        o.udpDstPort = localPort;
        Ipv4UdpCodec.encode(o, bytes, scratch);
        scratch.writeBytes(datagram, datagram.readerIndex(), bytes);
        capture.onPacket(CapturePoint.UNDERLAY_RX, scratch, nowNs);
    }

    // ---------------------------------------------------------------- drops and counters

    private void drop(Eni eni, Vpc vpc, DropReason reason, ByteBuf frame) {
        frame.release();
        countDrop(eni, vpc, reason);
    }

    private void countDrop(Eni eni, Vpc vpc, DropReason reason) {
        counters.onDrop(reason);
        if (eni != null) {
            eni.counters.onDrop(reason);
        }
        if (vpc != null) {
            vpc.counters.onDrop(reason);
        }
    }

    /** Switch-wide drops by reason (the uplink's buffer and fault drops are its own counters). */
    public TrafficCounters counters() {
        return counters;
    }

    /** Counters of VPC {@code vni}, or null if the switch never saw it configured. */
    public TrafficCounters vpcCounters(int vni) {
        Vpc vpc = vpcs.get(vni);
        return vpc == null ? null : vpc.counters;
    }

    public int[] vnis() {
        int[] out = new int[vpcs.size()];
        int i = 0;
        for (int vni : vpcs.keySet()) {
            out[i++] = vni;
        }
        return out;
    }

    public long underlayTxPackets() {
        return underlayTxPackets;
    }

    public long underlayTxBytes() {
        return underlayTxBytes;
    }

    public long underlayRxPackets() {
        return underlayRxPackets;
    }

    public long underlayRxBytes() {
        return underlayRxBytes;
    }

    /** Frames delivered from one local ENI to another without the underlay. */
    public long localDeliveries() {
        return localDeliveries;
    }

    /** ARP requests answered by proxy ARP. */
    public long arpReplies() {
        return arpReplies;
    }

    /** Encapsulations that had to copy because the frame lacked headroom. */
    public long encapsulationCopies() {
        return encapsulationCopies;
    }
}
