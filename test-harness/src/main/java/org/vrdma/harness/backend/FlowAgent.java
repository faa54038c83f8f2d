package org.vrdma.harness.backend;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.vrdma.cc.CongestionControls;
import org.vrdma.harness.cli.HostCommand;
import org.vrdma.harness.lab.LinkEgress;
import org.vrdma.harness.perf.RealTimeProfile;
import org.vrdma.verbs.IbvCompChannel;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.IbvCq;
import org.vrdma.verbs.IbvMr;
import org.vrdma.verbs.IbvPd;
import org.vrdma.verbs.IbvQp;
import org.vrdma.verbs.IbvQpInitAttr;
import org.vrdma.verbs.IbvSendWr;
import org.vrdma.verbs.IbvWc;
import org.vrdma.verbs.QpConnector;
import org.vrdma.verbs.QpInfo;
import org.vrdma.verbs.VerbsHost;
import org.vrdma.vnic.transport.CongestionControlSource;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RateWindowSourceFactory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WrOpcode;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * One host of a real-time flow run ({@code ./vrdma lab-agent}): a {@link VerbsHost} bound to the
 * host's underlay address, and an application on the Java verbs API that sends this host's flows
 * as RDMA WRITEs, one RC QP pair per flow, and serves the QPs of flows sent to it.
 *
 * <p>Phases, coordinated over TCP on the hosts' control ports:
 *
 * <ol>
 *   <li><b>setup</b>: the host connects a QP pair per flow it sends with the receiver's agent
 *       ({@code QP <flow> <QpInfo>} answered by the receiver's {@code QpInfo}, both sides then
 *       RESET→RTS), so QP creation is not part of any flow's completion time;
 *   <li><b>barrier</b>: every agent says {@code READY} to host 0, which answers {@code GO} to all
 *       once all are ready; that moment is each host's time 0;
 *   <li><b>run</b>: flows start at their planned times; each keeps up to {@code depth} WRITEs of
 *       {@code messageBytes} outstanding into the receiver's sink region; its FCT runs from its
 *       start to the completion of its last WRITE, as on the virtual backend; at {@code runNs} the
 *       flows still sending are reported unfinished;
 *   <li><b>end</b>: {@code DONE} to host 0, whose {@code BYE} (once every host is done) lets the
 *       receivers go.
 * </ol>
 *
 * <p>In calibration mode host 0 measures the empty network towards host 1 instead (the smallest
 * completion time of one 1 KiB WRITE, then the rate of one 2 MiB flow alone), which the run uses
 * as the ideal FCT and the Poisson link rate. Output: one line per flow, per receiver series and
 * for the counters, parsed by {@link RealTimeFlowRun}.
 */
public final class FlowAgent {
    /** A host of the run: ENI address, underlay address and port, control port. */
    public record Host(String name, String eniIp, String underlayIp, int udpPort, int ctlPort) {
        static Host parse(String s) {
            String[] f = s.split(",");
            return new Host(f[0], f[1], f[2], Integer.parseInt(f[3]), Integer.parseInt(f[4]));
        }

        String format() {
            return name + "," + eniIp + "," + underlayIp + "," + udpPort + "," + ctlPort;
        }
    }

    /** A flow this host sends. */
    public record Flow(int id, int dst, long bytes, long startNs) {
        static Flow parse(String s) {
            String[] f = s.split(",");
            return new Flow(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
        }

        String format() {
            return id + "," + dst + "," + bytes + "," + startNs;
        }
    }

    /**
     * What one agent runs.
     *
     * @param index this host in {@code hosts}
     * @param runNs flows still sending this long after GO are reported unfinished
     * @param sampleNs period of the delivered-bytes series
     * @param calibrate measure the empty network (host 0 towards host 1) instead of running flows
     */
    public record Config(
            int index,
            List<Host> hosts,
            int vni,
            int mtuBytes,
            RecoveryMode recovery,
            int messageBytes,
            int depth,
            String ccAlgorithm,
            String ccConfig,
            long runNs,
            long sampleNs,
            boolean calibrate,
            List<Flow> flows,
            String hostLink,
            long linkSeed) {

        /** The command-line arguments of {@code ./vrdma lab-agent} for this config. */
        public List<String> toArgs() {
            List<String> a = new ArrayList<>(List.of(
                    "lab-agent",
                    "--index",
                    String.valueOf(index),
                    "--vni",
                    String.valueOf(vni),
                    "--mtu",
                    String.valueOf(mtuBytes),
                    "--recovery",
                    recovery == RecoveryMode.GO_BACK_N ? "gbn" : "sr",
                    "--message-bytes",
                    String.valueOf(messageBytes),
                    "--depth",
                    String.valueOf(depth),
                    "--cc",
                    ccAlgorithm,
                    "--run-ns",
                    String.valueOf(runNs),
                    "--sample-ns",
                    String.valueOf(sampleNs)));
            if (ccConfig != null && !ccConfig.isBlank()) {
                a.add("--cc-config");
                a.add(ccConfig);
            }
            for (Host h : hosts) {
                a.add("--host");
                a.add(h.format());
            }
            if (calibrate) {
                a.add("--calibrate");
            }
            if (!flows.isEmpty()) {
                StringBuilder sb = new StringBuilder();
                for (Flow f : flows) {
                    if (!sb.isEmpty()) {
                        sb.append(';');
                    }
                    sb.append(f.format());
                }
                a.add("--flows");
                a.add(sb.toString());
            }
            if (hostLink != null) {
                a.addAll(List.of("--host-link", hostLink, "--link-seed", String.valueOf(linkSeed)));
            }
            return a;
        }

        /** Parses {@code --flows} and {@code --host} values. */
        public static List<Flow> parseFlows(String s) {
            List<Flow> out = new ArrayList<>();
            if (s != null && !s.isBlank()) {
                for (String f : s.split(";")) {
                    out.add(Flow.parse(f));
                }
            }
            return out;
        }

        public static Host parseHost(String s) {
            return Host.parse(s);
        }
    }

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);
    /**
     * Local ACK timeout code of flow QPs: 4.096 µs · 2^20 ≈ 4.3 s ceiling, so 7 retries outlast
     * several seconds of silence. The agents start together on shared cores, and under a test
     * suite's load (leak detection on every buffer) a host's loop stalled past the 1.07 s ceiling
     * of code 18 long enough to fail a flow of the first incast round with RETRY_EXC_ERR.
     */
    private static final int QP_TIMEOUT = 20;

    private static final int CALIBRATION_SMALL_BYTES = 1024;
    private static final int CALIBRATION_SMALL_RUNS = 20;
    private static final long CALIBRATION_BULK_BYTES = 2L << 20;

    private final Config config;
    private final PrintWriter out;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<IbvQp> served = new CopyOnWriteArrayList<>();
    private final CountDownLatch go = new CountDownLatch(1);
    private final CountDownLatch bye = new CountDownLatch(1);
    /** Host 0 only: the other agents' barrier connections. */
    private final List<PrintWriter> barrierPeers = new ArrayList<>();

    private int readyCount;
    private int doneCount;
    private VerbsHost host;
    private IbvContext ctx;
    private IbvPd pd;
    private IbvCq cq;
    private IbvCompChannel channel;
    private IbvMr source;
    private IbvMr sink;

    private FlowAgent(Config config, PrintWriter out) {
        this.config = config;
        this.out = out;
    }

    /** Runs the agent to its end; returns the exit status (0, or 4 when the run could not happen). */
    public static int run(Config config, PrintWriter out) throws Exception {
        return new FlowAgent(config, out).run();
    }

    private int run() throws Exception {
        Host me = config.hosts().get(config.index());
        TransportConfig transport = RealTimeProfile.transport();
        if (!config.ccAlgorithm().equals("none")) {
            RateWindowSourceFactory cc = CongestionControlSource.factory(
                    CongestionControls.defaults().configure(config.ccAlgorithm(), config.ccConfig()),
                    config.mtuBytes());
            transport = transport.withRateWindowFactory((qp, rate, rtt, window) ->
                    new CappedWindow(cc.create(qp, rate, rtt, window), RealTimeProfile.WINDOW_BYTES));
        }
        VerbsHost.Options options = new VerbsHost.Options(
                "vrdma-" + me.name(), me.underlayIp(), me.udpPort(), me.eniIp(), config.vni(), transport);
        try (Arena arena = Arena.ofShared();
                ServerSocket control = new ServerSocket()) {
            control.setReuseAddress(true);
            control.bind(new InetSocketAddress(InetAddress.getByName(me.underlayIp()), me.ctlPort()), 64);
            host = VerbsHost.start(
                    options, LinkEgress.switchSeed(config.linkSeed(), UnderlayAddress.parseIpv4(me.eniIp())));
            if (config.hostLink() != null) {
                EgressConfig link = LinkEgress.realTime(LinkEgress.parse(config.hostLink()));
                host.uplink(link);
                out.println("host link on the uplink: " + HostCommand.describe(link) + ", seed " + config.linkSeed());
            }
            try {
                ctx = host.device().open();
                pd = ctx.allocPd();
                channel = ctx.createCompChannel();
                int cqe = (int) Math.min(
                        ctx.queryDevice().maxCqe(),
                        Math.max(
                                1024L,
                                2L * config.depth() * Math.max(1, config.flows().size()) + 64));
                cq = ctx.createCq(cqe, channel);
                int region = Math.max(config.messageBytes(), CALIBRATION_SMALL_BYTES);
                source = pd.regMr(arena.allocate(region, 4096), AccessFlags.LOCAL_WRITE);
                sink = pd.regMr(arena.allocate(region, 4096), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                Thread acceptor = Thread.ofPlatform()
                        .daemon()
                        .name(Thread.currentThread().getName() + "-accept")
                        .start(() -> acceptLoop(control));
                try {
                    return phases();
                } finally {
                    control.close();
                    for (Socket s : sockets) {
                        s.close();
                    }
                    acceptor.join(5000);
                }
            } finally {
                host.close();
            }
        }
    }

    private int phases() throws Exception {
        List<SenderFlow> mine = new ArrayList<>();
        Map<Integer, Link> links = new HashMap<>();
        try {
            // Setup: a connected QP pair per flow.
            if (config.calibrate() && config.index() == 0) {
                mine.add(setupFlow(links, new Flow(-1, 1, CALIBRATION_SMALL_BYTES, 0)));
                mine.add(setupFlow(links, new Flow(-2, 1, CALIBRATION_BULK_BYTES, 0)));
            } else {
                for (Flow f : config.flows()) {
                    mine.add(setupFlow(links, f));
                }
            }
            // Barrier.
            Host leader = config.hosts().getFirst();
            try (Socket b = connect(leader)) {
                PrintWriter w = writer(b);
                BufferedReader r = reader(b);
                w.println("READY " + config.index());
                expect(r, "GO");
                out.println("go");
                long t0 = System.nanoTime();
                if (config.calibrate()) {
                    if (config.index() == 0) {
                        calibrate(mine.get(0), mine.get(1));
                    }
                } else {
                    runFlows(mine, t0);
                }
                w.println("DONE " + config.index());
                String line = r.readLine();
                if (!"BYE".equals(line)) {
                    out.println("warning: no BYE from host 0 (" + line + ")");
                }
            }
            for (Link l : links.values()) {
                l.writer.println("END");
            }
            report(mine);
            return 0;
        } finally {
            for (SenderFlow f : mine) {
                f.qp.close();
            }
        }
    }

    // ---------------------------------------------------------------- setup

    /** A control connection to a receiving host. */
    private record Link(Socket socket, PrintWriter writer, BufferedReader reader) {}

    private SenderFlow setupFlow(Map<Integer, Link> links, Flow f) throws IOException {
        Link link = links.get(f.dst());
        if (link == null) {
            Socket s = connect(config.hosts().get(f.dst()));
            link = new Link(s, writer(s), reader(s));
            links.put(f.dst(), link);
        }
        IbvQpInitAttr attr = IbvQpInitAttr.rc(cq, config.depth());
        attr.maxRecvWr = 1;
        attr.recoveryMode = config.recovery();
        IbvQp qp = ctx.createQp(pd, attr);
        QpInfo me = QpInfo.of(qp, source);
        link.writer().println("QP " + f.id() + " " + me.toLine());
        String reply = link.reader().readLine();
        if (reply == null) {
            throw new IOException("host " + config.hosts().get(f.dst()).name() + " closed the control connection");
        }
        QpInfo them = QpInfo.parse(reply);
        QpConnector.rcToRts(qp, me, them, QP_TIMEOUT);
        return new SenderFlow(f, qp, them);
    }

    private void acceptLoop(ServerSocket control) {
        while (!control.isClosed()) {
            try {
                Socket s = control.accept();
                sockets.add(s);
                Thread.ofPlatform()
                        .daemon()
                        .name(Thread.currentThread().getName() + "-conn")
                        .start(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** A control connection from another agent: QP requests, or (host 0) the barrier. */
    private void serve(Socket s) {
        try (s) {
            BufferedReader r = reader(s);
            PrintWriter w = writer(s);
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("QP ")) {
                    String info = line.substring(line.indexOf(' ', 3) + 1);
                    QpInfo them = QpInfo.parse(info);
                    IbvQpInitAttr attr = IbvQpInitAttr.rc(cq, 1);
                    attr.maxRecvWr = 1;
                    attr.recoveryMode = config.recovery();
                    IbvQp qp = ctx.createQp(pd, attr);
                    served.add(qp);
                    QpInfo me = QpInfo.of(qp, sink);
                    QpConnector.rcToRts(qp, me, them, QP_TIMEOUT);
                    w.println(me.toLine());
                } else if (line.equals("END")) {
                    return;
                } else if (line.startsWith("READY ")) {
                    onReady(w);
                } else if (line.startsWith("DONE ")) {
                    onDone();
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!(e instanceof SocketException)) {
                out.println("warning: control connection: " + e);
            }
        }
    }

    private synchronized void onReady(PrintWriter w) {
        barrierPeers.add(w);
        if (++readyCount == config.hosts().size()) {
            for (PrintWriter p : barrierPeers) {
                p.println("GO");
            }
        }
    }

    private synchronized void onDone() {
        if (++doneCount == config.hosts().size()) {
            for (PrintWriter p : barrierPeers) {
                p.println("BYE");
            }
        }
    }

    // ---------------------------------------------------------------- run

    /** A flow this host sends, on its own QP. */
    private static final class SenderFlow {
        final Flow flow;
        final IbvQp qp;
        final QpInfo peer;
        long postedBytes;
        long ackedBytes;
        int outstanding;
        long startNs = -1;
        long endNs = -1;
        WcStatus error;

        SenderFlow(Flow flow, IbvQp qp, QpInfo peer) {
            this.flow = flow;
            this.qp = qp;
            this.peer = peer;
        }

        boolean done() {
            return endNs >= 0 || error != null;
        }
    }

    private final IbvSendWr wr = new IbvSendWr(1);
    private final IbvWc[] wcs = IbvWc.array(64);
    private long[][] delivered;

    private void post(SenderFlow f) {
        while (f.outstanding < config.depth() && f.postedBytes < f.flow.bytes()) {
            int len = (int) Math.min(config.messageBytes(), f.flow.bytes() - f.postedBytes);
            wr.reset();
            wr.wrId = f.flow.id() & 0xFFFF_FFFFL;
            wr.opcode = WrOpcode.RDMA_WRITE;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.remoteAddr = f.peer.vaddr();
            wr.rkey = f.peer.rkey();
            wr.addSge(source, 0, len);
            f.qp.postSend(wr);
            f.postedBytes += len;
            f.outstanding++;
        }
    }

    private void runFlows(List<SenderFlow> flows, long t0) {
        Map<Integer, SenderFlow> byId = new HashMap<>();
        for (SenderFlow f : flows) {
            byId.put(f.flow.id(), f);
        }
        int bins = (int) Math.min(100_000, config.runNs() / config.sampleNs() + 1);
        delivered = new long[config.hosts().size()][bins];
        int next = 0;
        int active = 0;
        while (true) {
            long now = System.nanoTime() - t0;
            while (next < flows.size() && flows.get(next).flow.startNs() <= now) {
                SenderFlow f = flows.get(next++);
                f.startNs = now;
                active++;
                post(f);
            }
            int n = cq.poll(wcs);
            now = System.nanoTime() - t0;
            for (int i = 0; i < n; i++) {
                SenderFlow f = byId.get((int) wcs[i].wrId);
                if (f == null || f.done()) {
                    continue;
                }
                f.outstanding--;
                if (wcs[i].status != WcStatus.SUCCESS) {
                    f.error = wcs[i].status;
                    active--;
                    continue;
                }
                long len = Math.min(config.messageBytes(), f.flow.bytes() - f.ackedBytes);
                f.ackedBytes += len;
                int bin = (int) Math.min(bins - 1, now / config.sampleNs());
                delivered[f.flow.dst()][bin] += len;
                if (f.ackedBytes >= f.flow.bytes()) {
                    f.endNs = now;
                    active--;
                } else {
                    post(f);
                }
            }
            if (next == flows.size() && active == 0) {
                return;
            }
            if (now >= config.runNs()) {
                return;
            }
            if (n == 0) {
                long untilNext = next < flows.size() ? flows.get(next).flow.startNs() - now : Long.MAX_VALUE;
                long waitNs = Math.min(untilNext, Math.min(2_000_000, config.runNs() - now));
                if (waitNs > 0 && active > 0) {
                    cq.reqNotify(false);
                    if (cq.size() == 0) {
                        IbvCq ev = channel.getCqEvent(Duration.ofNanos(waitNs));
                        if (ev != null) {
                            ev.ackEvents(1);
                        }
                    }
                } else if (waitNs > 0) {
                    LockSupport.parkNanos(waitNs);
                }
            }
        }
    }

    // ---------------------------------------------------------------- calibration

    private void calibrate(SenderFlow small, SenderFlow bulk) {
        long baseNs = Long.MAX_VALUE;
        for (int i = 0; i < CALIBRATION_SMALL_RUNS; i++) {
            small.postedBytes = 0;
            small.ackedBytes = 0;
            long t = System.nanoTime();
            post(small);
            awaitFlow(small);
            baseNs = Math.min(baseNs, System.nanoTime() - t);
        }
        long t = System.nanoTime();
        post(bulk);
        awaitFlow(bulk);
        long bulkNs = System.nanoTime() - t;
        double rateBps = CALIBRATION_BULK_BYTES * 8e9 / Math.max(1, bulkNs - baseNs);
        out.printf(
                Locale.ROOT,
                "calibration baseNs=%d rateBps=%.0f bulkNs=%d %s%n",
                baseNs,
                rateBps,
                bulkNs,
                host.transportCounters());
    }

    private void awaitFlow(SenderFlow f) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (f.ackedBytes < f.flow.bytes()) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (wcs[i].status != WcStatus.SUCCESS) {
                    throw new IllegalStateException("calibration WRITE failed: " + wcs[i].status + "; "
                            + host.switchCounters() + "; " + host.transportCounters());
                }
                f.outstanding--;
                f.ackedBytes += Math.min(config.messageBytes(), f.flow.bytes() - f.ackedBytes);
                post(f);
            }
            if (n == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("calibration made no progress in 60 s");
                }
                // Sleep on the channel, not spin: a spinning thread takes the CPU the event loops need.
                cq.reqNotify(false);
                if (cq.size() == 0) {
                    IbvCq ev = channel.getCqEvent(Duration.ofMillis(100));
                    if (ev != null) {
                        ev.ackEvents(1);
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------- report

    private void report(List<SenderFlow> flows) {
        if (!config.calibrate()) {
            for (SenderFlow f : flows) {
                String status = f.error != null ? f.error.name() : f.endNs >= 0 ? "ok" : "unfinished";
                out.printf(
                        Locale.ROOT,
                        "flow %d start=%d end=%d acked=%d status=%s%n",
                        f.flow.id(),
                        f.startNs,
                        f.endNs,
                        f.ackedBytes,
                        status);
            }
            if (delivered != null) {
                for (int d = 0; d < delivered.length; d++) {
                    StringBuilder sb = new StringBuilder();
                    for (long v : delivered[d]) {
                        sb.append(v).append(',');
                    }
                    out.println("delivered " + d + " " + sb);
                }
            }
        }
        TransportCounters c = host.transportCounters();
        out.printf(
                Locale.ROOT,
                "counters tx=%d retx=%d timeouts=%d naks=%d cnpSent=%d cnpReceived=%d ecn=%d spurious=%d%n",
                c.txPackets,
                c.retransmittedPackets,
                c.timeouts,
                c.seqNaksSent,
                c.cnpsSent,
                c.cnpsReceived,
                c.ecnMarked,
                c.spuriousTimeouts);
        if (config.hostLink() != null) {
            out.println("vrdma host: " + LinkEgress.countersLine(host.uplinkCounters()));
        }
        out.flush();
    }

    /**
     * An algorithm's rate and window, the window at most {@code capBytes}: over the machine's own
     * links nothing marks ECN or stamps INT, so DCQCN and HPCC would send an unlimited window at
     * line rate into the kernel's socket buffers; the real-time window bounds what is in flight.
     */
    record CappedWindow(RateWindowSource inner, long capBytes) implements RateWindowSource {
        @Override
        public long rateBps() {
            return inner.rateBps();
        }

        @Override
        public long windowBytes() {
            return Math.min(inner.windowBytes(), capBytes);
        }

        @Override
        public void onPacketSent(long nowNs, int bytes) {
            inner.onPacketSent(nowNs, bytes);
        }

        @Override
        public void onAck(long nowNs, long ackedBytes, long rttNs, boolean ecnEcho) {
            inner.onAck(nowNs, ackedBytes, rttNs, ecnEcho);
        }

        @Override
        public void onCnp(long nowNs) {
            inner.onCnp(nowNs);
        }

        @Override
        public void onLoss(long nowNs, long lostBytes) {
            inner.onLoss(nowNs, lostBytes);
        }

        @Override
        public void onTimeout(long nowNs) {
            inner.onTimeout(nowNs);
        }

        @Override
        public void onSpuriousTimeout(long nowNs) {
            inner.onSpuriousTimeout(nowNs); // Swift undoes its timeout cuts here
        }

        @Override
        public void onResend(long nowNs) {
            inner.onResend(nowNs);
        }

        @Override
        public void onTimer(long nowNs) {
            inner.onTimer(nowNs);
        }

        @Override
        public long nextTimerNs() {
            return inner.nextTimerNs();
        }
    }

    // ---------------------------------------------------------------- sockets

    private Socket connect(Host h) throws IOException {
        long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(InetAddress.getByName(h.underlayIp()), h.ctlPort()), 5000);
                s.setTcpNoDelay(true);
                s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, config.runNs() / 1_000_000 + 120_000));
                sockets.add(s);
                return s;
            } catch (IOException e) {
                s.close();
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("host " + h.name() + " did not answer on its control port: " + e, e);
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw new IOException("interrupted while connecting to " + h.name());
                }
                LockSupport.parkNanos(20_000_000L);
            }
        }
    }

    private static PrintWriter writer(Socket s) throws IOException {
        Writer w = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.US_ASCII);
        return new PrintWriter(w, true);
    }

    private static BufferedReader reader(Socket s) throws IOException {
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
    }

    private static void expect(BufferedReader r, String want) throws IOException {
        String line = r.readLine();
        if (!want.equals(line)) {
            throw new IOException("expected " + want + " from host 0, got " + line);
        }
    }
}
