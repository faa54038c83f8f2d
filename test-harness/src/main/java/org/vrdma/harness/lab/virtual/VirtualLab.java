package org.vrdma.harness.lab.virtual;

import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.vrdma.harness.lab.EniHandle;
import org.vrdma.harness.lab.HostHandle;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.LinkEgress;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.harness.lab.PfcSpec;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.TopologyGenerator;
import org.vrdma.harness.lab.WorkloadSpec;
import org.vrdma.harness.lab.stats.Percentiles;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vswitch.fabric.FabricUplink;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.InnerFrame;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitch;
import org.vrdma.vswitch.pipeline.VSwitchConfig;

/**
 * A lab in virtual time: one {@link VirtualTimeScheduler} drives every host's vSwitch (the real
 * pipeline: ENIs, VPC routing, Geneve) and vNICs (the real RC transport and congestion control),
 * and every link direction as a {@link FabricPort} (rate, buffer, RED/ECN, INT, faults and
 * propagation delay): host uplinks behind each vSwitch, and the ports of every fabric switch
 * ({@link EcmpSwitch}). Deterministic for the lab and its seed. Single-threaded.
 */
final class VirtualLab implements LabRun {
    /** Underlay address of host i is 10.128.0.1 + i. */
    static final int HOST_BASE_IPV4 = 0x0A80_0001;

    static final int GENEVE_PORT = 6081;

    /**
     * The vSwitches' own uplink port: unlimited, so frames pass it at once, without marking, INT
     * or faults; the host link is a {@link FabricPort} behind it.
     */
    static final EgressConfig UNSHAPED_UPLINK = EgressConfig.of(0, 1L << 40).withIntStamping(false);
    /**
     * Egress buffer of ports under PFC: the lossless class is admitted by ingress accounting
     * (XOFF, headroom), not tail-dropped at egress.
     */
    static final long LOSSLESS_EGRESS_BUFFER_BYTES = 1L << 50;

    /** Inner headers of a RoCEv2 packet: Ethernet, IPv4, UDP, BTH, ICRC. */
    static final int INNER_HEADERS_BYTES = 14 + 20 + 8 + 12 + 4;

    private final Lab lab;
    private final LabNetwork network;
    private final VirtualTimeScheduler scheduler;
    private final FramePool allocator;
    private final VSwitch[] vswitches;
    private final List<EcmpSwitch> switches = new ArrayList<>();
    private final List<FabricPort> hostPorts = new ArrayList<>();
    private final List<FabricPort> fabricPorts = new ArrayList<>();
    private final List<String> fabricPortNames = new ArrayList<>();
    /** Priority flow control, or null. */
    private final PfcSpec pfc;
    /** PFC: every link direction into a switch, its sender and the switch's accounting of it. */
    private final List<PfcLinkView> pfcLinks = new ArrayList<>();

    private final List<List<VirtualEni>> enis = new ArrayList<>();
    private final List<HostHandle> hostHandles = new ArrayList<>();
    private final FlowEngine engine;
    /** Per node: indices of its links; per host: hop distance of every node to it. */
    private int[][] adjacency;

    private int[][] distanceTo;
    private final int overheadBytes;
    private boolean ran;
    private boolean closed;

    VirtualLab(Lab input) {
        this.lab = input.withDefaults();
        this.network = TopologyGenerator.resolve(lab);
        this.scheduler = new VirtualTimeScheduler(lab.seed());
        this.allocator = new FramePool(
                lab.transport().mtuBytes() + 1024,
                new PooledByteBufAllocator(true),
                lab.transport().lengthOnly());
        int hosts = network.hosts().size();
        this.vswitches = new VSwitch[hosts];
        this.pfc = lab.pfc() != null && lab.pfc().on() ? lab.pfc() : null;
        boolean intNeeded = usesHpcc();
        try {
            build(intNeeded);
            this.engine = new FlowEngine(this);
            this.overheadBytes = INNER_HEADERS_BYTES + vswitches[0].encapsulationHeadroomBytes();
            attachEnis();
        } catch (RuntimeException e) {
            closeQuietly();
            throw e instanceof LabException ? e : new LabException("", "cannot build the virtual lab: " + e, e);
        }
    }

    private boolean usesHpcc() {
        if (isHpcc(lab.cc() == null ? null : lab.cc().algorithm())) {
            return true;
        }
        for (LabNetwork.LabHost h : network.hosts()) {
            for (LabNetwork.LabEni e : h.enis()) {
                if (isHpcc(e.cc().algorithm())) {
                    return true;
                }
            }
        }
        for (WorkloadSpec w : lab.workloads()) {
            if (w.cc() != null && isHpcc(w.cc().algorithm())) {
                return true;
            }
            if (w instanceof WorkloadSpec.Flows fl) {
                for (WorkloadSpec.Flow f : fl.flows()) {
                    if (f.cc() != null && isHpcc(f.cc().algorithm())) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static boolean isHpcc(String name) {
        return "hpcc".equals(name);
    }

    private void build(boolean intNeeded) {
        List<LabNetwork.Node> nodes = network.nodes();
        List<LabNetwork.Link> links = network.links();
        int hosts = network.hosts().size();
        List<List<Integer>> adj = network.adjacency();
        adjacency = new int[adj.size()][];
        for (int n = 0; n < adj.size(); n++) {
            adjacency[n] = adj.get(n).stream().mapToInt(Integer::intValue).toArray();
        }
        distanceTo = new int[hosts][];
        for (int h = 0; h < hosts; h++) {
            distanceTo[h] = network.distancesTo(h);
        }
        int intHops = 0;
        int diameter = 0;
        for (int h = 0; h < Math.min(hosts, 2); h++) {
            for (int d : distanceTo[h]) {
                diameter = Math.max(diameter, d);
            }
        }
        if (intNeeded) {
            intHops = Math.min(org.vrdma.vswitch.pipeline.IntOption.MAX_HOPS, Math.max(1, diameter));
        }
        // The INT option holds at most MAX_HOPS records and the first ports fill them: on longer
        // paths (a fat tree across pods: six links) the sender's own link would take a record and
        // the last hop, the receiver's ToR port where incast queues build, would go unseen. There
        // the switches alone stamp, as in the HPCC paper; the sender knows its own line rate.
        boolean stampHostUplinks = diameter <= org.vrdma.vswitch.pipeline.IntOption.MAX_HOPS;
        for (int h = 0; h < hosts; h++) {
            if (adj.get(h).size() != 1) {
                throw new LabException(
                        "topology",
                        "host h" + h + " needs exactly one link, has "
                                + adj.get(h).size());
            }
            int li = adj.get(h).getFirst();
            LabNetwork.Link l = links.get(li);
            VSwitchConfig cfg = VSwitchConfig.of("h" + h, UnderlayAddress.of(HOST_BASE_IPV4 + h, GENEVE_PORT))
                    .withUplink(UNSHAPED_UPLINK)
                    .withIntMaxHops(intHops)
                    .withSeed(lab.seed() * 1_000_003L + h);
            // The host link (rate, buffer, ECN, INT, faults, propagation delay) is a fabric port
            // after the vSwitch, with the random streams the vSwitch's own uplink port would draw
            // from: the frame's tag is read here, while its headers are still in the CPU's cache.
            FabricPort uplink = new FabricPort(
                    cfg.name() + ":uplink",
                    scheduler,
                    stampHostUplinks
                            ? portConfig(l.spec())
                            : portConfig(l.spec()).withIntStamping(false),
                    new SeededRandoms(cfg.seed()),
                    l.spec().delayNs(),
                    pfc != null);
            hostPorts.add(uplink);
            InnerFrame peek = new InnerFrame();
            vswitches[h] = new VSwitch(
                    cfg,
                    scheduler,
                    allocator,
                    new FabricUplink(
                            scheduler,
                            (frame, nowNs) -> uplink.offer(frame, FrameTag.read(frame, HOST_BASE_IPV4, peek))));
        }
        // Switches and their ports, one per link. Under dynamic PFC thresholds a port faster than
        // the hosts' links takes a proportionally larger share of the free buffer (alpha doubles
        // with the rate, as in the HPCC paper's simulator).
        long hostRateBps = TopologyGenerator.hostLink(lab.topology()).rateBps();
        EcmpSwitch[] byNode = new EcmpSwitch[nodes.size()];
        int[][] portOfLink = new int[links.size()][2];
        for (LabNetwork.Node n : nodes) {
            if (n.host()) {
                continue;
            }
            EcmpSwitch s = new EcmpSwitch(
                    n.name(), scheduler, scheduler.randoms(), HOST_BASE_IPV4, hosts, n.id() * 0x61C88647);
            if (pfc != null) {
                s.enablePfc(new PfcIngress(scheduler, pfc));
            }
            byNode[n.id()] = s;
            switches.add(s);
            for (int li : adj.get(n.id())) {
                LabNetwork.Link l = links.get(li);
                int dir = l.a() == n.id() ? 0 : 1;
                int port = pfc == null
                        ? s.addPort(LinkEgress.egress(l.spec()), l.spec().delayNs())
                        : s.addPort(
                                portConfig(l.spec()),
                                l.spec().delayNs(),
                                headroomBytes(l.spec()),
                                (double) l.spec().rateBps() / hostRateBps);
                portOfLink[li][dir] = port;
                fabricPorts.add(s.ports().get(port));
                int peer = dir == 0 ? l.b() : l.a();
                fabricPortNames.add(n.name() + "->" + nodes.get(peer).name());
            }
        }
        // Far ends of every link direction: host uplinks' wires and switch ports.
        for (int h = 0; h < hosts; h++) {
            int li = adj.get(h).getFirst();
            LabNetwork.Link l = links.get(li);
            int far = l.a() == h ? l.b() : l.a();
            hostPorts.get(h).connect(farEnd(hostPorts.get(h), h, li, far, byNode, portOfLink));
        }
        for (EcmpSwitch s : switches) {
            int node = nodeOf(s, byNode);
            for (int li : adj.get(node)) {
                LabNetwork.Link l = links.get(li);
                int dir = l.a() == node ? 0 : 1;
                FabricPort port = s.ports().get(portOfLink[li][dir]);
                port.connect(farEnd(port, node, li, dir == 0 ? l.b() : l.a(), byNode, portOfLink));
            }
        }
        // ECMP routes: from each switch towards each host, every port on a shortest path.
        for (int h = 0; h < hosts; h++) {
            int[] dist = distanceTo[h];
            for (EcmpSwitch s : switches) {
                int node = nodeOf(s, byNode);
                List<Integer> candidates = new ArrayList<>();
                for (int li : adj.get(node)) {
                    LabNetwork.Link l = links.get(li);
                    int dir = l.a() == node ? 0 : 1;
                    int peer = dir == 0 ? l.b() : l.a();
                    if (dist[peer] >= 0 && dist[peer] == dist[node] - 1) {
                        candidates.add(portOfLink[li][dir]);
                    }
                }
                if (!candidates.isEmpty()) {
                    s.route(h, candidates.stream().mapToInt(Integer::intValue).toArray());
                }
            }
        }
    }

    private static int nodeOf(EcmpSwitch s, EcmpSwitch[] byNode) {
        for (int i = 0; i < byNode.length; i++) {
            if (byNode[i] == s) {
                return i;
            }
        }
        throw new IllegalStateException();
    }

    private TaggedSink sinkOf(int node, EcmpSwitch[] byNode) {
        if (node < vswitches.length) {
            VSwitch vs = vswitches[node];
            return (frame, tag, nowNs) -> vs.onUnderlayFrame(frame);
        }
        return byNode[node];
    }

    /**
     * Where packets that {@code sender} (on node {@code from}) puts on link {@code li} arrive: with
     * PFC, the receiving switch's ingress port on that link, which pauses {@code sender}.
     */
    private TaggedSink farEnd(FabricPort sender, int from, int li, int to, EcmpSwitch[] byNode, int[][] portOfLink) {
        if (pfc == null || to < vswitches.length) {
            return sinkOf(to, byNode);
        }
        LabNetwork.Link l = network.links().get(li);
        int in = portOfLink[li][l.a() == to ? 0 : 1];
        EcmpSwitch s = byNode[to];
        s.pfc().connect(in, sender, l.spec().delayNs());
        List<LabNetwork.Node> nodes = network.nodes();
        pfcLinks.add(new PfcLinkView(
                nodes.get(from).name() + "->" + nodes.get(to).name(), sender, s.pfc(), in, from < vswitches.length));
        return s.ingress(in);
    }

    /** A link direction into a switch under PFC: the sending port and the switch's ingress accounting. */
    private record PfcLinkView(String link, FabricPort sender, PfcIngress ingress, int in, boolean hostNic) {}

    /** A port's egress config; under PFC the lossless class is not tail-dropped at egress. */
    private EgressConfig portConfig(LinkSpec l) {
        EgressConfig c = LinkEgress.egress(l);
        return pfc == null ? c : c.withBufferBytes(LOSSLESS_EGRESS_BUFFER_BYTES);
    }

    /**
     * PFC headroom of an ingress port: the configured one, or what arrives after the port crosses
     * XOFF: the link's round trip at its rate (the PAUSE's way there, the last bits' way back) and
     * three of the largest frames (the one crossing, the one the sender is serialising, one spare).
     */
    private long headroomBytes(LinkSpec l) {
        if (pfc.headroomBytes() != null) {
            return pfc.headroomBytes();
        }
        long maxFrameBytes = lab.transport().mtuBytes() + 512L;
        return (long) Math.ceil(2.0 * l.delayNs() * l.rateBps() / 8e9) + 3 * maxFrameBytes;
    }

    private void attachEnis() {
        LinkSpec hostLink = TopologyGenerator.hostLink(lab.topology());
        long baseRttNs = baseRttNs();
        int bufferBytes = bufferBytes();
        var t = lab.transport();
        for (LabNetwork.LabHost h : network.hosts()) {
            List<VirtualEni> list = new ArrayList<>();
            VSwitch vs = vswitches[h.node()];
            for (int e = 0; e < h.enis().size(); e++) {
                LabNetwork.LabEni spec = h.enis().get(e);
                int eniId = e + 1;
                VirtualEni[] self = new VirtualEni[1];
                long windowBytes = t.windowBytes() > 0
                        ? t.windowBytes()
                        : Math.max(8192, 2 * (long) (hostLink.rateBps() * (double) baseRttNs / 8e9));
                TransportConfig config = TransportConfig.defaults()
                        .withWindowBytes(windowBytes)
                        .withAckCoalescePackets(t.ackCoalescePackets())
                        .withRto(t.minRtoUs() * 1000, Math.max(t.minRtoUs() * 1000, 1_000_000))
                        .withRateWindowFactory(VirtualEni.selecting(self, engine.factory(spec.cc())));
                config = new TransportConfig(
                        hostLink.rateBps(),
                        baseRttNs,
                        config.windowBytes(),
                        config.ackCoalescePackets(),
                        config.minRtoNs(),
                        config.minProbeNs(),
                        config.initialRtoNs(),
                        config.infiniteTimeoutCeilingNs(),
                        config.cnpIntervalNs(),
                        sackWindowPackets(windowBytes, t.mtuBytes(), config.sackWindowPackets()),
                        config.rateWindowFactory());
                Device.Builder builder = Device.builder()
                        .name(spec.id())
                        .ipv4(spec.ipv4())
                        .mac(spec.mac())
                        .attributes(DeviceAttributes.defaults().withMaxQp(4096))
                        .config(config)
                        .timers(scheduler)
                        .codec(t.lengthOnly() ? RocePacketCodec.withoutIcrc() : new RocePacketCodec())
                        .allocator(allocator)
                        // Room for the outer headers in front of every frame: the vSwitch encapsulates
                        // in place instead of copying the frame into a new one.
                        .headroomBytes(vs.encapsulationHeadroomBytes())
                        .sink((frame, nowNs) -> vs.onEniFrame(eniId, frame));
                VirtualEni eni = new VirtualEni(
                        spec, h.node(), builder, scheduler, allocator, bufferBytes, t.lengthOnly(), engine);
                self[0] = eni;
                vs.addEni(
                        EniConfig.of(eniId, spec.mac(), org.vrdma.harness.lab.Ipv4.format(spec.ipv4()), spec.vni()),
                        eni);
                list.add(eni);
            }
            enis.add(list);
            List<EniHandle> handles = Collections.unmodifiableList(new ArrayList<>(list));
            String name = h.name();
            hostHandles.add(new HostHandle() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public List<EniHandle> enis() {
                    return handles;
                }
            });
        }
        // Every ENI reaches every ENI of its VPC on other hosts.
        for (LabNetwork.LabHost a : network.hosts()) {
            for (LabNetwork.LabHost b : network.hosts()) {
                if (a == b) {
                    continue;
                }
                long underlayB = UnderlayAddress.of(HOST_BASE_IPV4 + b.node(), GENEVE_PORT);
                for (LabNetwork.LabEni eb : b.enis()) {
                    boolean sameVpc = a.enis().stream().anyMatch(ea -> ea.vni() == eb.vni());
                    if (sameVpc) {
                        vswitches[a.node()].addRemoteRoute(eb.vni(), eb.ipv4(), underlayB);
                    }
                }
            }
        }
    }

    /**
     * PSNs selective repeat tracks per QP: eight windows of packets (a power of two, at least 256,
     * at most the transport's default), not the default's 4096, whose arrays made most of what a
     * flow's QP pair allocates.
     */
    static int sackWindowPackets(long windowBytes, int mtuBytes, int defaultPackets) {
        long windowPackets = Math.max(1, (windowBytes + mtuBytes - 1) / mtuBytes);
        long packets = Long.highestOneBit(Math.max(1, windowPackets * 8 - 1)) << 1;
        return (int) Math.min(defaultPackets, Math.max(256, packets));
    }

    /** Round trip of the longest host-to-host path on the empty network (one MTU packet and its ACK). */
    private long baseRttNs() {
        // The host farthest from h0 has the longest path of these symmetric topologies.
        int far = 1;
        for (int h = 1; h < distanceTo.length; h++) {
            if (distanceTo[h][0] > distanceTo[far][0]) {
                far = h;
            }
        }
        long ns = org.vrdma.harness.lab.stats.FctMath.idealFctNs(
                lab.transport().mtuBytes(), lab.transport().mtuBytes(), INNER_HEADERS_BYTES + 58, 120, path(0, far));
        return Math.max(1_000, ns);
    }

    private int bufferBytes() {
        long b = lab.transport().messageBytes();
        for (WorkloadSpec w : lab.workloads()) {
            if (w instanceof WorkloadSpec.Perftest p) {
                long size = p.sizeBytes() == null ? 65536 : p.sizeBytes();
                long iterations = p.iterations() == null ? 5000 : p.iterations();
                b = Math.max(b, Math.max(2 * size, Math.min(size * iterations, 4L << 20)));
            }
        }
        return (int) Math.min(b, 1L << 30);
    }

    /** The links of one shortest path from host {@code src} to host {@code dst}. */
    List<LinkSpec> path(int src, int dst) {
        int[] d = distanceTo[dst];
        List<LinkSpec> path = new ArrayList<>();
        int n = src;
        while (n != dst) {
            for (int li : adjacency[n]) {
                LabNetwork.Link l = network.links().get(li);
                int m = l.a() == n ? l.b() : l.a();
                if (d[m] == d[n] - 1) {
                    path.add(l.spec());
                    n = m;
                    break;
                }
            }
        }
        return path;
    }

    VirtualTimeScheduler scheduler() {
        return scheduler;
    }

    int packetOverheadBytes() {
        return overheadBytes;
    }

    int ackWireBytes() {
        return overheadBytes + 4;
    }

    VirtualEni firstEni(int host) {
        return enis.get(host).getFirst();
    }

    VirtualEni eniOf(String ref, String path) {
        LabNetwork.LabEni e = network.eni(ref, path);
        int host = network.hostIndex().get(e.host());
        for (VirtualEni v : enis.get(host)) {
            if (v.spec.name().equals(e.name())) {
                return v;
            }
        }
        throw new LabException(path, "no ENI " + ref);
    }

    @Override
    public Lab lab() {
        return lab;
    }

    @Override
    public LabNetwork network() {
        return network;
    }

    @Override
    public String backend() {
        return "virtual";
    }

    @Override
    public String describe() {
        LinkSpec host = TopologyGenerator.hostLink(lab.topology());
        return String.format(
                "virtual time: %d hosts, %d switches, %d links (%s); host links %.0f Gbit/s, %d ns; seed %d",
                network.hosts().size(),
                switches.size(),
                network.links().size(),
                lab.topology().type(),
                host.rateGbps(),
                host.delayNs(),
                lab.seed());
    }

    @Override
    public List<HostHandle> hosts() {
        return hostHandles;
    }

    @Override
    public EniHandle eni(String ref) {
        return eniOf(ref, "");
    }

    @Override
    public long nowNs() {
        return scheduler.nowNs();
    }

    @Override
    public boolean await(BooleanSupplier done, long timeoutNs) {
        return scheduler.runUntil(done, scheduler.nowNs() + timeoutNs);
    }

    /** Packets sent on every link so far (host uplinks and switch ports). */
    long linkTransmissions() {
        long n = 0;
        for (FabricPort p : hostPorts) {
            n += p.txPackets();
        }
        for (FabricPort p : fabricPorts) {
            n += p.txPackets();
        }
        return n;
    }

    @Override
    public LabResults run(RunProgress progress) {
        if (ran) {
            throw new IllegalStateException("a lab run runs once");
        }
        ran = true;
        long durationNs = lab.durationUs() * 1000;
        long totalNs = durationNs + lab.drainUs() * 1000;
        long intervalNs = lab.sampleIntervalUs() * 1000;
        Sampler sampler = new Sampler(intervalNs, (int) Math.min(1_000_000, totalNs / intervalNs + 1));
        engine.schedule();
        scheduler.scheduleAt(scheduler.nowNs(), sampler);
        long startNs = scheduler.nowNs();
        long step = Math.max(intervalNs, totalNs / 200);
        long t = startNs;
        while (t < startNs + totalNs) {
            t = Math.min(startNs + totalNs, t + step);
            scheduler.runUntil(t);
            progress.onTime(
                    t - startNs, durationNs, totalNs - durationNs, engine.flowsFinished(), engine.flowsStarted());
            if (t - startNs >= durationNs && engine.idle()) {
                break;
            }
        }
        sampler.stopped = true;
        long endNs = scheduler.nowNs();
        List<LabResults.FlowResult> flows = engine.flowResults();
        return new LabResults(
                LabResults.FORMAT,
                backend(),
                lab.seed(),
                lab,
                endNs,
                flows,
                Percentiles.buckets(flows),
                engine.perftestResults(),
                counters(),
                sampler.throughput(),
                sampler.queues(),
                null,
                pfc == null ? null : pfcResults(endNs));
    }

    /** PFC counters per link direction into a switch, and their totals. */
    LabResults.Pfc pfcResults(long nowNs) {
        long xoff = 0;
        long xon = 0;
        long paused = 0;
        long hostPaused = 0;
        int linksPaused = 0;
        int nicsPaused = 0;
        long delayed = 0;
        long maxIngress = 0;
        long drops = 0;
        List<LabResults.PfcLink> list = new ArrayList<>();
        for (PfcLinkView v : pfcLinks) {
            FabricPort p = v.sender();
            long pausedNs = p.pausedNs(nowNs);
            long sent = v.ingress().xoffSent(v.in());
            xoff += sent;
            xon += v.ingress().xonSent(v.in());
            paused += pausedNs;
            delayed += p.pauseDelayedPackets();
            maxIngress = Math.max(maxIngress, v.ingress().maxBytes(v.in()));
            drops += v.ingress().headroomDrops(v.in());
            if (p.pausesReceived() > 0) {
                linksPaused++;
                if (v.hostNic()) {
                    nicsPaused++;
                    hostPaused += pausedNs;
                }
            }
            if (p.pausesReceived() > 0 || sent > 0 || v.ingress().headroomDrops(v.in()) > 0) {
                list.add(new LabResults.PfcLink(
                        v.link(),
                        p.pausesReceived(),
                        pausedNs,
                        p.pauseDelayedPackets(),
                        sent,
                        v.ingress().xonSent(v.in()),
                        v.ingress().maxBytes(v.in()),
                        v.ingress().headroomDrops(v.in())));
            }
        }
        return new LabResults.Pfc(
                xoff, xon, paused, hostPaused, linksPaused, nicsPaused, delayed, maxIngress, drops, list);
    }

    private LabResults.Counters counters() {
        TransportCounters sum = new TransportCounters();
        for (List<VirtualEni> list : enis) {
            for (VirtualEni e : list) {
                e.device.counters().addTo(sum);
            }
        }
        long ecn = 0;
        long drops = 0;
        long lost = 0;
        for (FabricPort p : hostPorts) {
            ecn += p.ecnMarked();
            drops += p.bufferDrops();
            lost += p.dataLost() + p.controlLost();
        }
        for (FabricPort p : fabricPorts) {
            ecn += p.ecnMarked();
            drops += p.bufferDrops();
            lost += p.dataLost() + p.controlLost();
        }
        for (PfcLinkView v : pfcLinks) {
            drops += v.ingress().headroomDrops(v.in()); // the lossless class, dropped at ingress
        }
        return new LabResults.Counters(
                engine.flowsStarted(),
                engine.flowsFinished(),
                engine.bytesFinished(),
                sum.txPackets,
                sum.retransmittedPackets,
                sum.timeouts,
                sum.spuriousTimeouts,
                sum.seqNaksSent,
                sum.cnpsSent,
                sum.cnpsReceived,
                ecn,
                drops,
                lost,
                linkTransmissions());
    }

    /** Samples delivered bytes per host and queue depth per fabric port at a fixed period. */
    private final class Sampler implements TimerHandler {
        private final long intervalNs;
        private final int maxSamples;
        private final double[][] rxGbps;
        private final double[][] queueKb;
        private final long[] lastRx;
        private int samples;
        boolean stopped;

        Sampler(long intervalNs, int maxSamples) {
            this.intervalNs = intervalNs;
            this.maxSamples = maxSamples;
            int hosts = vswitches.length;
            this.rxGbps = new double[hosts][maxSamples];
            this.queueKb = new double[fabricPorts.isEmpty() ? hostPorts.size() : fabricPorts.size()][maxSamples];
            this.lastRx = new long[hosts];
        }

        @Override
        public void onTimer(long nowNs, long timerId) {
            if (stopped || samples >= maxSamples) {
                return;
            }
            for (int h = 0; h < vswitches.length; h++) {
                long rx = 0;
                for (int e = 0, n = enis.get(h).size(); e < n; e++) {
                    rx += vswitches[h].eni(e + 1).counters().rxBytes();
                }
                rxGbps[h][samples] = (rx - lastRx[h]) * 8.0 / intervalNs;
                lastRx[h] = rx;
            }
            if (fabricPorts.isEmpty()) {
                for (int p = 0; p < hostPorts.size(); p++) {
                    queueKb[p][samples] = hostPorts.get(p).queuedBytes() / 1000.0;
                }
            } else {
                for (int p = 0; p < fabricPorts.size(); p++) {
                    queueKb[p][samples] = fabricPorts.get(p).queuedBytes() / 1000.0;
                }
            }
            samples++;
            scheduler.scheduleAt(nowNs + intervalNs, this);
        }

        LabResults.TimeSeries throughput() {
            // The first sample is at time 0 (nothing received yet): series start at the second.
            List<LabResults.Series> s = new ArrayList<>();
            int n = Math.max(0, samples - 1);
            double[] total = new double[n];
            for (int h = 0; h < rxGbps.length; h++) {
                for (int i = 0; i < n; i++) {
                    total[i] += rxGbps[h][i + 1];
                }
            }
            s.add(new LabResults.Series("all hosts", round(total)));
            if (rxGbps.length <= 16) {
                for (int h = 0; h < rxGbps.length; h++) {
                    s.add(new LabResults.Series("h" + h, round(java.util.Arrays.copyOfRange(rxGbps[h], 1, n + 1))));
                }
            }
            return new LabResults.TimeSeries("Gbit/s received", intervalNs, s);
        }

        LabResults.TimeSeries queues() {
            // The eight ports with the largest mean queue.
            List<String> names = fabricPorts.isEmpty()
                    ? network.hosts().stream().map(h -> h.name() + " uplink").toList()
                    : fabricPortNames;
            Integer[] order = new Integer[queueKb.length];
            double[] mean = new double[queueKb.length];
            for (int p = 0; p < queueKb.length; p++) {
                order[p] = p;
                for (int i = 0; i < samples; i++) {
                    mean[p] += queueKb[p][i];
                }
            }
            java.util.Arrays.sort(
                    order, (x, y) -> mean[y] != mean[x] ? Double.compare(mean[y], mean[x]) : Integer.compare(x, y));
            List<LabResults.Series> s = new ArrayList<>();
            for (int i = 0; i < Math.min(8, order.length); i++) {
                s.add(new LabResults.Series(
                        names.get(order[i]), round(java.util.Arrays.copyOf(queueKb[order[i]], samples))));
            }
            return new LabResults.TimeSeries("queue depth, kB", intervalNs, s);
        }

        private double[] round(double[] v) {
            double[] r = new double[v.length];
            for (int i = 0; i < v.length; i++) {
                r[i] = Percentiles.round(v[i]);
            }
            return r;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly();
    }

    private void closeQuietly() {
        if (engine != null) {
            engine.close();
        }
        for (List<VirtualEni> list : enis) {
            for (VirtualEni e : list) {
                e.close();
            }
        }
        for (EcmpSwitch s : switches) {
            s.close();
        }
        for (VSwitch vs : vswitches) {
            if (vs != null) {
                vs.close();
            }
        }
        for (FabricPort p : hostPorts) {
            p.close();
        }
        allocator.close();
    }
}
