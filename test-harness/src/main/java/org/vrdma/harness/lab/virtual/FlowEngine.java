package org.vrdma.harness.lab.virtual;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.vrdma.harness.lab.CcSpec;
import org.vrdma.harness.lab.FlowSizeCdf;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.harness.lab.TopologyGenerator;
import org.vrdma.harness.lab.WorkloadSpec;
import org.vrdma.harness.lab.stats.FctMath;
import org.vrdma.harness.lab.stats.Percentiles;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vnic.transport.CongestionControlSource;
import org.vrdma.vnic.transport.RateWindowSourceFactory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.RcConnector;
import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.SendWorkRequest;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * Runs a lab's workloads on the virtual lab's ENIs with the vNIC verbs: flows as RDMA WRITEs on a
 * QP pair of their own (created at the flow's start, destroyed at its end), perftest-style tests,
 * and the arrival processes (incast rounds, all-to-all, Poisson arrivals with sizes from a CDF).
 * Work-request ids carry the kind and the flow or test: {@code kind << 56 | index}.
 */
final class FlowEngine {
    private static final long KIND_FLOW = 0;
    private static final long KIND_PING_CLIENT_SEND = 1;
    private static final long KIND_PING_CLIENT_RECV = 2;
    private static final long KIND_PING_SERVER_SEND = 3;
    private static final long KIND_PING_SERVER_RECV = 4;
    /** The local ACK timeout attribute of flow QPs: 4.096 µs × 2^8 ≈ 1 ms caps the first RTO. */
    private static final int QP_TIMEOUT = 8;

    private final VirtualLab lab;
    private final VirtualTimeScheduler scheduler;
    private final Lab spec;
    private final RecoveryMode recovery;
    private final Mtu mtu;
    private final int messageBytes;
    private final int depth;
    private final Map<String, RateWindowSourceFactory> ccFactories = new HashMap<>();
    private final Map<Long, List<LinkSpec>> paths = new HashMap<>();
    private final SendWorkRequest wr = new SendWorkRequest(1);
    private final RecvWorkRequest rwr = new RecvWorkRequest(1);

    final List<Flow> flows = new ArrayList<>();
    final List<PerftestRun> perftests = new ArrayList<>();
    private int activeFlows;
    private long flowsFinished;
    private int pendingStarts;
    private long bytesFinished;
    private final long durationNs;

    FlowEngine(VirtualLab lab) {
        this.lab = lab;
        this.scheduler = lab.scheduler();
        this.spec = lab.lab();
        this.recovery =
                spec.transport().recovery().equals("gbn") ? RecoveryMode.GO_BACK_N : RecoveryMode.SELECTIVE_REPEAT;
        this.mtu = mtuOf(spec.transport().mtuBytes());
        this.messageBytes = spec.transport().messageBytes();
        this.depth = spec.transport().sendQueueDepth();
        this.durationNs = spec.durationUs() * 1000;
    }

    static Mtu mtuOf(int bytes) {
        for (Mtu m : Mtu.values()) {
            if (m.bytes() == bytes) {
                return m;
            }
        }
        throw new LabException("transport.mtuBytes", "unsupported MTU " + bytes);
    }

    /** The factory of a congestion-control spec ({@code none}: the static line-rate window). */
    RateWindowSourceFactory factory(CcSpec cc) {
        if (cc == null || cc.isNone()) {
            return RateWindowSourceFactory.staticWindow();
        }
        String key = cc.algorithm() + ":" + cc.config();
        return ccFactories.computeIfAbsent(
                key,
                k -> CongestionControlSource.factory(
                        org.vrdma.cc.CongestionControls.defaults().configure(cc.algorithm(), cc.config()),
                        spec.transport().mtuBytes()));
    }

    /** Schedules every workload's starts. */
    void schedule() {
        List<WorkloadSpec> ws = spec.workloads();
        for (int i = 0; i < ws.size(); i++) {
            String name = "w" + i;
            switch (ws.get(i)) {
                case WorkloadSpec.Perftest p -> schedulePerftest(i, p);
                case WorkloadSpec.Incast w -> {
                    VirtualEni receiver = lab.eniOf(w.receiver(), "workloads[" + i + "].receiver");
                    List<VirtualEni> senders = new ArrayList<>();
                    if (w.senders() != null) {
                        for (String s : w.senders()) {
                            senders.add(lab.eniOf(s, "workloads[" + i + "].senders"));
                        }
                    } else {
                        for (int h = 0; senders.size() < w.senderCount(); h++) {
                            if (h != receiver.hostIndex) {
                                senders.add(lab.firstEni(h));
                            }
                        }
                    }
                    int rounds = w.rounds() == null ? 1 : w.rounds();
                    long interval = w.intervalUs() == null ? 0 : w.intervalUs() * 1000;
                    long start = us(w.startUs());
                    for (int r = 0; r < rounds; r++) {
                        at(start + r * interval, () -> {
                            for (VirtualEni s : senders) {
                                startFlow(name, s, receiver, w.flowBytes(), w.cc());
                            }
                        });
                    }
                }
                case WorkloadSpec.AllToAll w -> {
                    List<VirtualEni> members = members(w.hosts(), "workloads[" + i + "].hosts");
                    at(us(w.startUs()), () -> {
                        for (VirtualEni a : members) {
                            for (VirtualEni b : members) {
                                if (a != b) {
                                    startFlow(name, a, b, w.flowBytes(), w.cc());
                                }
                            }
                        }
                    });
                }
                case WorkloadSpec.Poisson w -> schedulePoisson(i, name, w);
                case WorkloadSpec.Flows w -> {
                    for (int f = 0; f < w.flows().size(); f++) {
                        WorkloadSpec.Flow flow = w.flows().get(f);
                        String path = "workloads[" + i + "].flows[" + f + "]";
                        VirtualEni src = lab.eniOf(flow.src(), path + ".src");
                        VirtualEni dst = lab.eniOf(flow.dst(), path + ".dst");
                        CcSpec cc = flow.cc() != null ? flow.cc() : w.cc();
                        at(us(flow.startUs()), () -> startFlow(name, src, dst, flow.bytes(), cc));
                    }
                }
            }
        }
    }

    private List<VirtualEni> members(List<String> hosts, String path) {
        List<VirtualEni> m = new ArrayList<>();
        if (hosts == null) {
            for (int h = 0; h < lab.network().hosts().size(); h++) {
                m.add(lab.firstEni(h));
            }
        } else {
            for (String h : hosts) {
                m.add(lab.eniOf(h, path));
            }
        }
        return m;
    }

    private void schedulePoisson(int index, String name, WorkloadSpec.Poisson w) {
        FlowSizeCdf cdf = w.flowSizeCdf();
        List<VirtualEni> members = members(w.hosts(), "workloads[" + index + "].hosts");
        long start = us(w.startUs());
        long stop = w.stopUs() == null ? durationNs : w.stopUs() * 1000;
        double rateBps = TopologyGenerator.hostLink(spec.topology()).rateBps();
        // Offered load per sender: load x host link rate; mean gap = mean size / that rate.
        double meanGapNs = cdf.meanBytes() * 8 / (w.load() * rateBps) * 1e9;
        for (int m = 0; m < members.size(); m++) {
            VirtualEni src = members.get(m);
            RandomGenerator rng = scheduler.random("poisson:" + index, m);
            pendingStarts++;
            TimerHandler arrival = new TimerHandler() {
                @Override
                public void onTimer(long nowNs, long timerId) {
                    if (nowNs >= stop) {
                        pendingStarts--;
                        return;
                    }
                    VirtualEni dst;
                    do {
                        dst = members.get(rng.nextInt(members.size()));
                    } while (dst.hostIndex == src.hostIndex);
                    startFlow(name, src, dst, cdf.sample(rng), w.cc());
                    scheduler.scheduleAt(nowNs + exponentialNs(rng, meanGapNs), this);
                }
            };
            scheduler.scheduleAt(start + exponentialNs(rng, meanGapNs), arrival);
        }
    }

    private static long exponentialNs(RandomGenerator rng, double meanNs) {
        return Math.max(1, Math.round(-Math.log(1 - rng.nextDouble()) * meanNs));
    }

    private void at(long timeNs, Runnable action) {
        pendingStarts++;
        scheduler.scheduleAt(timeNs, (now, id) -> {
            pendingStarts--;
            action.run();
        });
    }

    private static long us(Long v) {
        return v == null ? 0 : v * 1000;
    }

    /** Starts a flow of RDMA WRITEs now. */
    Flow startFlow(String workload, VirtualEni src, VirtualEni dst, long bytes, CcSpec cc) {
        return startFlow(workload, src, dst, bytes, cc, WrOpcode.RDMA_WRITE, messageBytes, null);
    }

    private Flow startFlow(
            String workload,
            VirtualEni src,
            VirtualEni dst,
            long bytes,
            CcSpec cc,
            WrOpcode opcode,
            int msgBytes,
            PerftestRun perftest) {
        String ccName = cc != null ? cc.algorithm() : src.spec.cc().algorithm();
        Flow f = new Flow(
                flows.size(), workload, src, dst, bytes, scheduler.nowNs(), opcode, msgBytes, ccName, perftest);
        flows.add(f);
        activeFlows++;
        f.idealFctNs = FctMath.idealFctNs(
                bytes, mtu.bytes(), lab.packetOverheadBytes(), lab.ackWireBytes(), path(src.hostIndex, dst.hostIndex));
        f.requester = src.createQp(cc == null ? null : factory(cc), recovery, depth, 1);
        if (src.lastSource() instanceof CongestionControlSource s) {
            f.cc = s.algorithm();
        }
        f.responder = dst.createQp(null, recovery, 1, 1);
        int psnA = (f.id * 7919) & 0xFFFFFF;
        int psnB = (f.id * 104729) & 0xFFFFFF;
        RcConnector.connect(
                f.requester, f.responder.qpNum(), dst.spec.ipv4(), dst.spec.mac(), mtu, psnA, psnB, QP_TIMEOUT);
        RcConnector.connect(
                f.responder, f.requester.qpNum(), src.spec.ipv4(), src.spec.mac(), mtu, psnB, psnA, QP_TIMEOUT);
        src.requesterFlows[f.requester.qpNum() - org.vrdma.vnic.verbs.Device.FIRST_QPN] = f;
        dst.responderFlows[f.responder.qpNum() - org.vrdma.vnic.verbs.Device.FIRST_QPN] = f;
        post(f);
        return f;
    }

    private List<LinkSpec> path(int src, int dst) {
        long key = (long) src << 32 | dst;
        List<LinkSpec> p = paths.get(key);
        if (p == null) {
            p = lab.path(src, dst);
            paths.put(key, p);
        }
        return p;
    }

    private void post(Flow f) {
        long span = f.perftest == null ? f.messageBytes : f.src.bufferBytes;
        long slots = Math.max(1, Math.min(f.src.bufferBytes, f.dst.bufferBytes) / f.messageBytes);
        while (f.outstanding < depth && f.postedBytes < f.bytes) {
            int len = (int) Math.min(f.messageBytes, f.bytes - f.postedBytes);
            long offset = f.perftest == null ? 0 : (f.postedMessages % slots) * f.messageBytes;
            wr.reset();
            wr.wrId = (KIND_FLOW << 56) | f.id;
            wr.opcode = f.opcode;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.addSge(VirtualEni.BUFFER_VA + offset, len, f.src.mr.lkey());
            wr.remoteAddr = VirtualEni.BUFFER_VA + offset;
            wr.rkey = f.dst.mr.rkey();
            f.requester.postSend(wr);
            f.postedBytes += len;
            f.postedMessages++;
            f.outstanding++;
        }
        assert span > 0;
    }

    /** A completion from an ENI's CQ. */
    void onCompletion(VirtualEni eni, WorkCompletion wc, long nowNs) {
        long kind = wc.wrId >>> 56;
        int index = (int) (wc.wrId & 0xFFFF_FFFFL);
        if (kind == KIND_FLOW) {
            onFlowCompletion(flows.get(index), wc, nowNs);
        } else {
            onPingCompletion(perftests.get(index), kind, wc, nowNs);
        }
    }

    private void onFlowCompletion(Flow f, WorkCompletion wc, long nowNs) {
        if (f.done()) {
            return;
        }
        f.outstanding--;
        if (wc.status != WcStatus.SUCCESS) {
            f.failed = true;
            f.failure = wc.status;
            finish(f, nowNs);
            return;
        }
        long len = Math.min(f.messageBytes, f.bytes - f.completedMessages * (long) f.messageBytes);
        f.completedMessages++;
        f.completedBytes += len;
        if (f.completedBytes >= f.bytes) {
            f.endNs = nowNs;
            finish(f, nowNs);
        } else {
            post(f);
        }
    }

    private void finish(Flow f, long nowNs) {
        activeFlows--;
        if (!f.failed) {
            flowsFinished++;
            bytesFinished += f.bytes;
        }
        f.src.requesterFlows[f.requester.qpNum() - org.vrdma.vnic.verbs.Device.FIRST_QPN] = null;
        f.dst.responderFlows[f.responder.qpNum() - org.vrdma.vnic.verbs.Device.FIRST_QPN] = null;
        PerftestRun p = f.perftest;
        if (p != null && p.flows.stream().allMatch(Flow::done)) {
            p.endNs = nowNs;
            p.failed = p.flows.stream().anyMatch(x -> x.failed);
            verifyBandwidth(p);
        }
        f.requester.destroy();
        f.responder.destroy();
        f.requester = null;
        f.responder = null;
    }

    // ---- perftest ----

    private void schedulePerftest(int index, WorkloadSpec.Perftest p) {
        String path = "workloads[" + index + "]";
        VirtualEni client = lab.eniOf(p.client(), path + ".client");
        VirtualEni server = lab.eniOf(p.server(), path + ".server");
        int size = p.sizeBytes() != null ? p.sizeBytes() : p.test().equals("msgRate") ? 64 : 65536;
        long iterations = p.iterations() != null ? p.iterations() : p.test().equals("sendLat") ? 1000 : 5000;
        PerftestRun run = new PerftestRun(perftests.size(), p, client, server, size, iterations);
        perftests.add(run);
        at(us(p.startUs()), () -> startPerftest(run));
    }

    private void startPerftest(PerftestRun run) {
        run.startNs = scheduler.nowNs();
        WorkloadSpec.Perftest p = run.spec;
        boolean verify = Boolean.TRUE.equals(p.verify());
        if (p.test().equals("sendLat")) {
            startPingPong(run, verify);
            return;
        }
        WrOpcode op = p.test().equals("readBw") ? WrOpcode.RDMA_READ : WrOpcode.RDMA_WRITE;
        if (verify) {
            // The side the data comes from gets seeded random bytes; the other starts zeroed.
            VirtualEni from = op == WrOpcode.RDMA_READ ? run.server : run.client;
            fillRandom(from, scheduler.random("perftest:" + run.index));
        }
        int qps = p.qps() == null ? 1 : p.qps();
        long perQp = run.iterations / qps;
        for (int q = 0; q < qps; q++) {
            long messages = perQp + (q < run.iterations % qps ? 1 : 0);
            if (messages > 0) {
                run.flows.add(startFlow(
                        "w" + spec.workloads().indexOf(p),
                        run.client,
                        run.server,
                        messages * run.sizeBytes,
                        p.cc(),
                        op,
                        run.sizeBytes,
                        run));
            }
        }
    }

    private static void fillRandom(VirtualEni eni, RandomGenerator rng) {
        var buf = eni.memory.buffer();
        for (int i = 0; i + 8 <= eni.bufferBytes; i += 8) {
            buf.setLong(i, rng.nextLong());
        }
    }

    private void verifyBandwidth(PerftestRun run) {
        if (!Boolean.TRUE.equals(run.spec.verify()) || run.failed) {
            return;
        }
        boolean read = run.spec.test().equals("readBw");
        VirtualEni from = read ? run.server : run.client;
        VirtualEni to = read ? run.client : run.server;
        long slots = Math.max(1, Math.min(from.bufferBytes, to.bufferBytes) / run.sizeBytes);
        long covered = Math.min(slots, run.iterations) * run.sizeBytes;
        compare(run, from, 0, to, 0, covered);
    }

    private static void compare(PerftestRun run, VirtualEni a, int offA, VirtualEni b, int offB, long bytes) {
        var x = a.memory.buffer();
        var y = b.memory.buffer();
        for (int i = 0; i < bytes; i++) {
            if (x.getByte(offA + i) != y.getByte(offB + i)) {
                run.mismatchedBytes++;
            } else {
                run.verifiedBytes++;
            }
        }
    }

    private void startPingPong(PerftestRun run, boolean verify) {
        fillRandom(run.client, scheduler.random("perftest:" + run.index));
        run.halfRttNs = new long[(int) run.iterations];
        run.clientQp = run.client.createQp(factory(run.spec.cc()), recovery, depth);
        run.serverQp = run.server.createQp(factory(run.spec.cc()), recovery, depth);
        int psnA = (run.index * 31 + 1) & 0xFFFFFF;
        int psnB = (run.index * 17 + 5) & 0xFFFFFF;
        RcConnector.connect(
                run.clientQp,
                run.serverQp.qpNum(),
                run.server.spec.ipv4(),
                run.server.spec.mac(),
                mtu,
                psnA,
                psnB,
                QP_TIMEOUT);
        RcConnector.connect(
                run.serverQp,
                run.clientQp.qpNum(),
                run.client.spec.ipv4(),
                run.client.spec.mac(),
                mtu,
                psnB,
                psnA,
                QP_TIMEOUT);
        // The server receives at offset 0 and echoes from there; the client receives the echo after its own message.
        postRecv(run.serverQp, run.server, 0, run.sizeBytes, (KIND_PING_SERVER_RECV << 56) | run.index);
        postRecv(run.clientQp, run.client, run.sizeBytes, run.sizeBytes, (KIND_PING_CLIENT_RECV << 56) | run.index);
        sendPing(run, run.clientQp, run.client, 0, KIND_PING_CLIENT_SEND);
        run.sentAtNs = scheduler.nowNs();
    }

    private void postRecv(QueuePair qp, VirtualEni eni, int offset, int len, long wrId) {
        rwr.reset();
        rwr.wrId = wrId;
        rwr.addSge(VirtualEni.BUFFER_VA + offset, len, eni.mr.lkey());
        qp.postRecv(rwr);
    }

    private void sendPing(PerftestRun run, QueuePair qp, VirtualEni eni, int offset, long kind) {
        wr.reset();
        wr.wrId = (kind << 56) | run.index;
        wr.opcode = WrOpcode.SEND;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.addSge(VirtualEni.BUFFER_VA + offset, run.sizeBytes, eni.mr.lkey());
        qp.postSend(wr);
    }

    private void onPingCompletion(PerftestRun run, long kind, WorkCompletion wc, long nowNs) {
        if (run.done()) {
            return;
        }
        if (wc.status != WcStatus.SUCCESS) {
            run.failed = true;
            endPingPong(run, nowNs);
            return;
        }
        if (kind == KIND_PING_SERVER_RECV) {
            postRecv(run.serverQp, run.server, 0, run.sizeBytes, (KIND_PING_SERVER_RECV << 56) | run.index);
            sendPing(run, run.serverQp, run.server, 0, KIND_PING_SERVER_SEND);
        } else if (kind == KIND_PING_CLIENT_RECV) {
            run.halfRttNs[(int) run.roundTrips++] = (nowNs - run.sentAtNs) / 2;
            if (Boolean.TRUE.equals(run.spec.verify())) {
                compare(run, run.client, 0, run.client, run.sizeBytes, run.sizeBytes);
            }
            if (run.roundTrips == run.iterations) {
                endPingPong(run, nowNs);
                return;
            }
            postRecv(run.clientQp, run.client, run.sizeBytes, run.sizeBytes, (KIND_PING_CLIENT_RECV << 56) | run.index);
            run.sentAtNs = nowNs;
            sendPing(run, run.clientQp, run.client, 0, KIND_PING_CLIENT_SEND);
        }
    }

    private void endPingPong(PerftestRun run, long nowNs) {
        run.endNs = nowNs;
        run.clientQp.destroy();
        run.serverQp.destroy();
        run.clientQp = null;
        run.serverQp = null;
    }

    // ---- state and results ----

    /** True when nothing more will start and every flow and test is done. */
    boolean idle() {
        return pendingStarts == 0 && activeFlows == 0 && perftests.stream().allMatch(PerftestRun::done);
    }

    long flowsStarted() {
        return flows.size();
    }

    long flowsFinished() {
        return flowsFinished;
    }

    long bytesFinished() {
        return bytesFinished;
    }

    List<LabResults.FlowResult> flowResults() {
        List<LabResults.FlowResult> out = new ArrayList<>(flows.size());
        for (Flow f : flows) {
            if (f.perftest != null) {
                continue;
            }
            long fct = f.endNs >= 0 ? f.endNs - f.startNs : -1;
            out.add(new LabResults.FlowResult(
                    f.id,
                    f.workload,
                    f.src.spec.id(),
                    f.dst.spec.id(),
                    f.bytes,
                    f.startNs,
                    f.endNs,
                    fct,
                    f.idealFctNs,
                    Percentiles.round(FctMath.slowdown(fct, f.idealFctNs)),
                    f.ccName,
                    unfinishedReason(f)));
        }
        return out;
    }

    /** Why {@code f} did not finish, or null if it did. */
    private static String unfinishedReason(Flow f) {
        if (f.failed) {
            return "failed with " + f.failure + " (" + f.completedBytes + " of " + f.bytes + " bytes acknowledged)";
        }
        if (f.endNs < 0) {
            return "still sending at the end of the drain time (" + f.completedBytes + " of " + f.bytes
                    + " bytes acknowledged)";
        }
        return null;
    }

    List<LabResults.PerftestResult> perftestResults() {
        List<LabResults.PerftestResult> out = new ArrayList<>();
        for (PerftestRun p : perftests) {
            double seconds = p.endNs > p.startNs ? (p.endNs - p.startNs) / 1e9 : 0;
            double gbps = 0;
            double rate = 0;
            double p50 = 0;
            double p99 = 0;
            long iterations = p.iterations;
            if (p.spec.test().equals("sendLat")) {
                iterations = p.roundTrips;
                if (p.roundTrips > 0) {
                    double[] s = new double[(int) p.roundTrips];
                    for (int i = 0; i < s.length; i++) {
                        s[i] = p.halfRttNs[i] / 1000.0;
                    }
                    Arrays.sort(s);
                    p50 = Percentiles.round(Percentiles.of(s, 50));
                    p99 = Percentiles.round(Percentiles.of(s, 99));
                }
            } else if (seconds > 0 && !p.failed) {
                gbps = Percentiles.round(p.iterations * (double) p.sizeBytes * 8 / seconds / 1e9);
                rate = Percentiles.round(p.iterations / seconds);
            }
            out.add(new LabResults.PerftestResult(
                    p.spec.test(),
                    p.client.spec.id(),
                    p.server.spec.id(),
                    p.sizeBytes,
                    iterations,
                    gbps,
                    rate,
                    p50,
                    p99,
                    p.verifiedBytes,
                    p.mismatchedBytes + (p.failed ? 1 : 0)));
        }
        return out;
    }

    /** Destroys the QPs of flows and tests still in flight. */
    void close() {
        for (Flow f : flows) {
            if (f.requester != null) {
                f.requester.destroy();
                f.responder.destroy();
                f.requester = null;
                f.responder = null;
            }
        }
        for (PerftestRun p : perftests) {
            if (p.clientQp != null) {
                p.clientQp.destroy();
                p.serverQp.destroy();
                p.clientQp = null;
                p.serverQp = null;
            }
        }
    }
}
