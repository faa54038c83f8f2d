package org.vrdma.harness.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.vrdma.harness.lab.CcSpec;
import org.vrdma.harness.lab.FlowPlan;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LinkEgress;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.WorkloadSpec;
import org.vrdma.harness.lab.stats.FctMath;
import org.vrdma.harness.lab.stats.Percentiles;
import org.vrdma.vnic.transport.RecoveryMode;

/**
 * A lab's flow workloads on a real-time backend, over the Java verbs API: a {@link FlowAgent} on
 * every host (a thread, a process in a namespace, a process in a container), first a calibration
 * of the empty network between the first two hosts, then the flows of {@link FlowPlan}, each
 * host sending its own. Results have the virtual backend's layout: per-flow FCT and slowdown,
 * buckets, counters, delivered throughput per host; queue depths are not observable (the links
 * are the machine's own), so that series is empty.
 *
 * <p><b>Ideal FCT</b> on a real-time backend is measured, not modelled: {@code base + bytes · 8 /
 * rate}, with {@code base} the smallest completion time of one 1 KiB WRITE and {@code rate} the
 * rate of one 2 MiB flow alone between the first two hosts. Poisson arrivals use the lab's host
 * link rate, as on the virtual backend, so a lab and seed give the same flows on every run (a lab
 * meant for real time states a rate the machine can carry, e.g. 1 Gbit/s).
 */
final class RealTimeFlowRun {
    /** Queue pairs a host may need (its vNIC has 1024): every flow is a QP at each end. */
    static final int MAX_QPS_PER_HOST = 1000;

    /** What an agent prints when host 0's barrier lets the run start. */
    private static final Pattern GO = Pattern.compile("(?m)^go$");

    private static final Pattern CALIBRATION = Pattern.compile("calibration baseNs=(\\d+) rateBps=(\\d+)");
    private static final Pattern FLOW =
            Pattern.compile("(?m)^flow (-?\\d+) start=(-?\\d+) end=(-?\\d+) acked=(\\d+) status=(\\S+)$");
    private static final Pattern DELIVERED = Pattern.compile("(?m)^delivered (\\d+) ([\\d,]*)$");
    private static final Pattern COUNTERS = Pattern.compile(
            "(?m)^counters tx=(\\d+) retx=(\\d+) timeouts=(\\d+) naks=(\\d+) cnpSent=(\\d+) cnpReceived=(\\d+) ecn=(\\d+) spurious=(\\d+)$");

    private final Lab lab;
    private final LabNetwork network;
    private final RunningLab running;

    RealTimeFlowRun(Lab lab, LabNetwork network, RunningLab running) {
        this.lab = lab;
        this.network = network;
        this.running = running;
    }

    /** Whether {@code lab} has flow workloads (anything but perftest). */
    static boolean hasFlows(Lab lab) {
        return lab.workloads().stream().anyMatch(w -> !(w instanceof WorkloadSpec.Perftest));
    }

    /** The measured empty network. */
    record Calibration(long baseNs, double rateBps) {
        long idealFctNs(long bytes) {
            return baseNs + Math.round(bytes * 8e9 / rateBps);
        }
    }

    /** What the flow workloads produced. */
    record Outcome(
            List<LabResults.FlowResult> flows,
            long[] counters,
            LabResults.TimeSeries throughput,
            long endNs,
            Calibration calibration) {}

    Outcome run(RunProgress progress) throws Exception {
        if (network.hosts().size() < 2) {
            throw new LabException("topology", "flow workloads need two hosts at least");
        }
        CcSpec cc = hostCc(lab, network);
        List<FlowPlan.PlannedFlow> plan = plan(lab, network);
        checkQps(network, plan);
        Calibration cal = calibrate(cc);
        long durationNs = lab.durationUs() * 1000;
        long runNs = durationNs + lab.drainUs() * 1000;
        long sampleNs = Math.max(lab.sampleIntervalUs() * 1000, 1_000_000);
        List<List<FlowAgent.Flow>> perHost = new ArrayList<>();
        for (int h = 0; h < network.hosts().size(); h++) {
            perHost.add(new ArrayList<>());
        }
        for (FlowPlan.PlannedFlow f : plan) {
            perHost.get(f.src()).add(new FlowAgent.Flow(f.id(), f.dst(), f.bytes(), f.startNs()));
        }
        List<FlowAgent.Host> hosts = agentHosts(network.hosts().size());
        List<HostRun> runs = new ArrayList<>();
        try {
            for (int h = 0; h < hosts.size(); h++) {
                FlowAgent.Config c = config(h, hosts, cc, runNs, sampleNs, false, perHost.get(h));
                runs.add(running.hosts()
                        .get(h)
                        .environment()
                        .start("flows-" + hosts.get(h).name(), c.toArgs()));
            }
            Duration limit = Duration.ofNanos(runNs).plusSeconds(180);
            long deadline = System.nanoTime() + limit.toNanos();
            List<String> outputs = new ArrayList<>();
            long startNs = System.nanoTime();
            long goNs = -1;
            for (int h = 0; h < runs.size(); h++) {
                HostRun r = runs.get(h);
                while (!r.finished() && System.nanoTime() - deadline < 0) {
                    // Lab time starts at the agents' GO, after every flow's QPs are connected (seconds
                    // for a thousand flows), where host 0's output shows it; agents report flows only
                    // when they end, so the count completed is not known before.
                    HostRun first = runs.getFirst();
                    if (goNs < 0
                            && (!first.outputWhileRunning()
                                    || GO.matcher(first.output()).find())) {
                        goNs = first.outputWhileRunning() ? System.nanoTime() : startNs;
                    }
                    long labNs = goNs < 0 ? 0 : Math.min(runNs, System.nanoTime() - goNs);
                    progress.onTime(labNs, durationNs, runNs - durationNs, -1, plan.size());
                    Thread.sleep(200); // not await(): a run that outlives await's timeout is killed
                }
                int exit = r.await(Duration.ofSeconds(1));
                if (exit != 0) {
                    throw new LabException(
                            "workloads",
                            "flow agent on " + hosts.get(h).name() + " ended with " + exit + ":\n" + tail(r.output()));
                }
                outputs.add(r.output());
            }
            return collect(plan, outputs, cal, runNs, sampleNs);
        } finally {
            for (HostRun r : runs) {
                r.kill();
            }
        }
    }

    /**
     * What a real-time backend cannot run of {@code lab}'s flow workloads (congestion control other
     * than one per lab, more flows than a host has QPs for), checked before any host comes up: a
     * {@link LabException} naming the field, in milliseconds rather than after the hosts' start.
     */
    static void check(Lab lab, LabNetwork network) {
        if (hasFlows(lab)) {
            hostCc(lab, network);
            checkQps(network, plan(lab, network));
        }
    }

    private static List<FlowPlan.PlannedFlow> plan(Lab lab, LabNetwork network) {
        return FlowPlan.of(
                lab,
                network,
                org.vrdma.harness.lab.TopologyGenerator.hostLink(lab.topology()).rateBps());
    }

    /** The congestion control of the hosts' ENIs; per-workload or per-flow choices must agree with it. */
    private static CcSpec hostCc(Lab lab, LabNetwork network) {
        CcSpec cc = null;
        for (LabNetwork.LabHost h : network.hosts()) {
            CcSpec c = h.enis().getFirst().cc();
            if (cc != null && !same(cc, c)) {
                throw new LabException(
                        "hosts",
                        "ENIs with different congestion control; the real-time flow agents run one algorithm per lab"
                                + " (the virtual backend runs one per ENI or QP)");
            }
            cc = c;
        }
        for (int i = 0; i < lab.workloads().size(); i++) {
            WorkloadSpec w = lab.workloads().get(i);
            if (!(w instanceof WorkloadSpec.Perftest) && w.cc() != null && !same(w.cc(), cc)) {
                throw new LabException(
                        "workloads[" + i + "].cc",
                        "per-QP congestion control differs from the ENIs' (" + name(cc)
                                + "); on the real-time backends a lab runs one algorithm: set it as the lab's cc");
            }
            if (w instanceof WorkloadSpec.Flows fl) {
                for (int f = 0; f < fl.flows().size(); f++) {
                    CcSpec c = fl.flows().get(f).cc();
                    if (c != null && !same(c, cc)) {
                        throw new LabException(
                                "workloads[" + i + "].flows[" + f + "].cc",
                                "per-flow congestion control differs from the ENIs' (" + name(cc)
                                        + "); on the real-time backends a lab runs one algorithm");
                    }
                }
            }
        }
        return cc;
    }

    private static String name(CcSpec cc) {
        return cc == null ? "none" : cc.algorithm();
    }

    private static boolean same(CcSpec a, CcSpec b) {
        return name(a).equals(name(b))
                && String.valueOf(a == null ? null : a.config()).equals(String.valueOf(b == null ? null : b.config()));
    }

    private static void checkQps(LabNetwork network, List<FlowPlan.PlannedFlow> plan) {
        int[] qps = new int[network.hosts().size()];
        for (FlowPlan.PlannedFlow f : plan) {
            qps[f.src()]++;
            qps[f.dst()]++;
        }
        for (int h = 0; h < qps.length; h++) {
            if (qps[h] > MAX_QPS_PER_HOST) {
                throw new LabException(
                        "workloads",
                        "host " + network.hosts().get(h).name() + " would need " + qps[h]
                                + " QPs (one per flow it sends or receives, connected before the run); the real-time"
                                + " backends allow " + MAX_QPS_PER_HOST + ": shorten durationUs or lower the load");
            }
        }
    }

    private List<FlowAgent.Host> agentHosts(int count) throws Exception {
        List<FlowAgent.Host> hosts = new ArrayList<>();
        for (int h = 0; h < count; h++) {
            LabHost lh = running.hosts().get(h);
            HostEnvironment env = lh.environment();
            hosts.add(new FlowAgent.Host(
                    lh.name(), lh.eniIpv4(), env.underlayIp(), env.allocatePort(), env.allocatePort()));
        }
        return hosts;
    }

    private FlowAgent.Config config(
            int index,
            List<FlowAgent.Host> hosts,
            CcSpec cc,
            long runNs,
            long sampleNs,
            boolean calibrate,
            List<FlowAgent.Flow> flows) {
        var t = lab.transport();
        return new FlowAgent.Config(
                index,
                hosts,
                running.plan().vni(),
                t.mtuBytes(),
                t.recovery().equals("gbn") ? RecoveryMode.GO_BACK_N : RecoveryMode.SELECTIVE_REPEAT,
                t.messageBytes(),
                t.sendQueueDepth(),
                name(cc),
                cc == null || cc.config() == null ? null : cc.config().toString(),
                runNs,
                sampleNs,
                calibrate,
                flows,
                running.hostLinkJson(hosts.get(index).name()),
                running.plan().linkSeed());
    }

    /** Host 0 measures the empty network towards host 1. */
    private Calibration calibrate(CcSpec cc) throws Exception {
        List<FlowAgent.Host> hosts = agentHosts(2);
        List<HostRun> runs = new ArrayList<>();
        try {
            for (int h = 0; h < 2; h++) {
                FlowAgent.Config c = config(h, hosts, cc, 60_000_000_000L, 1_000_000_000L, true, List.of());
                runs.add(running.hosts()
                        .get(h)
                        .environment()
                        .start("calibrate-" + hosts.get(h).name(), c.toArgs()));
            }
            for (int h = 0; h < 2; h++) {
                int exit = runs.get(h).await(Duration.ofSeconds(180));
                if (exit != 0) {
                    throw new LabException(
                            "workloads",
                            "calibration on " + hosts.get(h).name() + " ended with " + exit + ":\n"
                                    + tail(runs.get(h).output()));
                }
            }
            Matcher m = CALIBRATION.matcher(runs.getFirst().output());
            if (!m.find()) {
                throw new LabException(
                        "workloads",
                        "calibration printed no result:\n"
                                + tail(runs.getFirst().output()));
            }
            return new Calibration(Long.parseLong(m.group(1)), Double.parseDouble(m.group(2)));
        } finally {
            for (HostRun r : runs) {
                r.kill();
            }
        }
    }

    private Outcome collect(
            List<FlowPlan.PlannedFlow> plan, List<String> outputs, Calibration cal, long runNs, long sampleNs) {
        Map<Integer, String[]> byId = new HashMap<>();
        long[] counters = new long[11];
        int bins = (int) Math.min(100_000, runNs / sampleNs + 1);
        double[][] gbps = new double[network.hosts().size()][bins];
        int lastBin = 0;
        for (String out : outputs) {
            Matcher m = FLOW.matcher(out);
            while (m.find()) {
                byId.put(Integer.parseInt(m.group(1)), new String[] {m.group(2), m.group(3), m.group(4), m.group(5)});
            }
            Matcher d = DELIVERED.matcher(out);
            while (d.find()) {
                int dst = Integer.parseInt(d.group(1));
                String[] v = d.group(2).split(",");
                for (int i = 0; i < v.length && i < bins; i++) {
                    if (!v[i].isEmpty()) {
                        long bytes = Long.parseLong(v[i]);
                        gbps[dst][i] += bytes * 8.0 / sampleNs;
                        if (bytes > 0) {
                            lastBin = Math.max(lastBin, i);
                        }
                    }
                }
            }
            Matcher c = COUNTERS.matcher(out);
            if (c.find()) {
                for (int i = 0; i < 8; i++) {
                    counters[i] += Long.parseLong(c.group(i + 1));
                }
            }
            long[] link = new long[4];
            LinkEgress.addCounters(out, link);
            counters[8] += link[1];
            counters[9] += link[2];
            counters[10] += link[3];
        }
        List<LabResults.FlowResult> flows = new ArrayList<>();
        long endNs = 0;
        for (FlowPlan.PlannedFlow f : plan) {
            String[] m = byId.get(f.id());
            long ideal = cal.idealFctNs(f.bytes());
            String cc = name(hostCcQuiet());
            if (m == null) {
                flows.add(new LabResults.FlowResult(
                        f.id(),
                        f.workload(),
                        f.srcEni(),
                        f.dstEni(),
                        f.bytes(),
                        f.startNs(),
                        -1,
                        -1,
                        ideal,
                        -1,
                        cc,
                        "not reported by its sender's agent"));
                continue;
            }
            long start = Long.parseLong(m[0]);
            long end = Long.parseLong(m[1]);
            long acked = Long.parseLong(m[2]);
            String status = m[3];
            String reason = null;
            long fct = -1;
            if (status.equals("ok")) {
                fct = end - start;
                endNs = Math.max(endNs, end);
            } else if (status.equals("unfinished")) {
                reason = start < 0
                        ? "not started before the end of the run"
                        : "still sending at the end of the drain time (" + acked + " of " + f.bytes()
                                + " bytes acknowledged)";
                end = -1;
            } else {
                reason = "failed with " + status + " (" + acked + " of " + f.bytes() + " bytes acknowledged)";
                end = -1;
            }
            flows.add(new LabResults.FlowResult(
                    f.id(),
                    f.workload(),
                    f.srcEni(),
                    f.dstEni(),
                    f.bytes(),
                    start < 0 ? f.startNs() : start,
                    end,
                    fct,
                    ideal,
                    Percentiles.round(FctMath.slowdown(fct, ideal)),
                    cc,
                    reason));
        }
        int n = Math.min(bins, lastBin + 1);
        List<LabResults.Series> series = new ArrayList<>();
        double[] total = new double[n];
        for (double[] h : gbps) {
            for (int i = 0; i < n; i++) {
                total[i] += h[i];
            }
        }
        series.add(new LabResults.Series("all hosts", round(total)));
        for (int h = 0; h < gbps.length; h++) {
            series.add(
                    new LabResults.Series(network.hosts().get(h).name(), round(java.util.Arrays.copyOf(gbps[h], n))));
        }
        return new Outcome(flows, counters, new LabResults.TimeSeries("Gbit/s received", sampleNs, series), endNs, cal);
    }

    private CcSpec hostCcQuiet() {
        return network.hosts().getFirst().enis().getFirst().cc();
    }

    private static double[] round(double[] v) {
        double[] r = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            r[i] = Percentiles.round(v[i]);
        }
        return r;
    }

    private static String tail(String s) {
        return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
    }
}
