package org.vrdma.harness.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.vrdma.harness.lab.EniHandle;
import org.vrdma.harness.lab.HostHandle;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.LinkEgress;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.TopologyGenerator;
import org.vrdma.harness.lab.WorkloadSpec;
import org.vrdma.harness.lab.stats.Percentiles;
import org.vrdma.harness.perf.RealTimeTwoHostLab;
import org.vrdma.vnic.verbs.Device;

/**
 * A lab definition running on a real-time backend ({@code embedded}, {@code netns}, {@code
 * docker}): the {@link LabRun} face of a {@link RunningLab}. Perftest workloads run as verified
 * transfers between the hosts' processes, one after the other; flow workloads run as a flow agent
 * on the Java verbs API on every host ({@link RealTimeFlowRun}). The vNICs live in those
 * processes, so {@link EniHandle#device()} is not available here (the virtual backend offers it).
 */
public final class RealTimeLabRun implements LabRun {
    private static final Pattern BW_ROW =
            Pattern.compile("\\n\\s*(\\d+)\\s+(\\d+)\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)\\s+intact");
    private static final Pattern LAT_ROW = Pattern.compile(
            "\\n\\s*(\\d+)\\s+(\\d+)\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)");
    private static final Pattern COUNTERS = Pattern.compile(
            "counters: tx (\\d+) pkts, rx \\d+ pkts, retransmitted (\\d+), timeouts (\\d+) \\((\\d+) spurious\\), NAK seq (\\d+)");

    private final Lab lab;
    private final LabNetwork network;
    private final RunningLab running;
    private final List<HostHandle> hosts = new ArrayList<>();

    private RealTimeLabRun(Lab lab, LabNetwork network, RunningLab running) {
        this.lab = lab;
        this.network = network;
        this.running = running;
        for (LabNetwork.LabHost h : network.hosts()) {
            List<EniHandle> enis = h.enis().stream().<EniHandle>map(Eni::new).toList();
            hosts.add(new HostHandle() {
                @Override
                public String name() {
                    return h.name();
                }

                @Override
                public List<EniHandle> enis() {
                    return enis;
                }
            });
        }
    }

    /** Brings {@code lab} up on {@code backend}. */
    static RealTimeLabRun start(HostBackend backend, Lab definition) {
        Lab lab = definition.withDefaults();
        LabPlans.checkRealTime(lab);
        LabNetwork network = TopologyGenerator.resolve(lab);
        LabPlan plan = LabPlans.of(lab.name(), network, lab.seed());
        RealTimeFlowRun.check(lab, network);
        try {
            return new RealTimeLabRun(lab, network, RunningLab.start(backend, plan));
        } catch (LabException e) {
            throw e;
        } catch (Exception e) {
            throw new LabException(
                    "", "cannot bring lab " + lab.name() + " up on " + backend.name() + ": " + e.getMessage(), e);
        }
    }

    /** The running lab: hosts and transfers. */
    public RunningLab runningLab() {
        return running;
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
        return running.backend();
    }

    @Override
    public String describe() {
        return network.hosts().size() + " hosts on the " + running.backend() + " backend (lab " + running.id()
                + "), real time; each host's link to its switch emulated on its vSwitch uplink, links between"
                + " switches not modelled, ENI MACs derived from their addresses";
    }

    @Override
    public List<HostHandle> hosts() {
        return hosts;
    }

    @Override
    public EniHandle eni(String ref) {
        LabNetwork.LabEni spec = network.eni(ref, "eni");
        return host(spec.host()).eni(spec.name());
    }

    @Override
    public long nowNs() {
        return System.nanoTime();
    }

    @Override
    public boolean await(BooleanSupplier done, long timeoutNs) {
        return RealTimeTwoHostLab.awaitWallClock(done, timeoutNs);
    }

    /**
     * Runs the lab's perftest workloads one after the other, each a transfer checked byte for byte,
     * then its flow workloads ({@link RealTimeFlowRun}: a flow agent on the Java verbs API on every
     * host).
     */
    @Override
    public LabResults run(RunProgress progress) {
        List<WorkloadSpec.Perftest> tests = new ArrayList<>();
        for (WorkloadSpec w : lab.workloads()) {
            if (w instanceof WorkloadSpec.Perftest p) {
                tests.add(p);
            }
        }
        long start = System.nanoTime();
        List<LabResults.PerftestResult> results = new ArrayList<>();
        long tx = 0;
        long retransmitted = 0;
        long timeouts = 0;
        long spurious = 0;
        long naks = 0;
        long delivered = 0;
        long[] link = new long[4]; // packets sent, injected losses, buffer drops, ECN marks
        if (!tests.isEmpty()) {
            progress.onSteps("test", 0, tests.size());
        }
        for (int i = 0; i < tests.size(); i++) {
            WorkloadSpec.Perftest p = tests.get(i);
            int index = lab.workloads().indexOf(p);
            Transfer t = transfer(index, p);
            if (t.clientExit() != 0 || t.serverExit() != 0 || (Boolean.TRUE.equals(p.verify()) && !verified(t))) {
                throw new LabException("workloads[" + index + "]", "perftest failed: " + t);
            }
            results.add(result(p, t));
            Matcher c = COUNTERS.matcher(t.clientOutput());
            if (c.find()) {
                tx += Long.parseLong(c.group(1));
                retransmitted += Long.parseLong(c.group(2));
                timeouts += Long.parseLong(c.group(3));
                spurious += Long.parseLong(c.group(4));
                naks += Long.parseLong(c.group(5));
            }
            LinkEgress.addCounters(t.clientOutput(), link);
            LinkEgress.addCounters(t.serverOutput(), link);
            delivered += t.options().totalBytes();
            progress.onSteps("test", i + 1, tests.size());
        }
        List<LabResults.FlowResult> flows = List.of();
        long[] fc = new long[11];
        LabResults.TimeSeries throughput = new LabResults.TimeSeries("Gbit/s", 0, List.of());
        long finished = 0;
        long endNs = System.nanoTime() - start;
        List<String> notes = new ArrayList<>();
        if (tests.stream().anyMatch(p -> p.test().equals("sendLat") && Boolean.TRUE.equals(p.verify()))) {
            // The remote ping-pong checks nothing of the payload; say so rather than report it verified.
            notes.add("sendLat payloads are not checked on real-time backends (verify applies to writeBw, readBw"
                    + " and msgRate there); the virtual backend checks every byte");
        }
        String unapplied = notApplied(network);
        if (unapplied != null) {
            // Say what of the lab's links did not apply rather than let figures pass for ones
            // measured under it.
            notes.add(unapplied);
        }
        if (RealTimeFlowRun.hasFlows(lab)) {
            RealTimeFlowRun.Outcome o;
            try {
                o = new RealTimeFlowRun(lab, network, running).run(progress);
            } catch (LabException e) {
                throw e;
            } catch (Exception e) {
                throw new LabException("workloads", "flow workloads did not run: " + e.getMessage(), e);
            }
            flows = o.flows();
            fc = o.counters();
            throughput = o.throughput();
            endNs = o.endNs();
            notes.add(String.format(
                    java.util.Locale.ROOT,
                    "ideal FCT measured on the empty network between %s and %s: %.1f us + bytes at %.3f Gbit/s;"
                            + " the hosts' links are emulated on their vSwitch uplinks (drops and marks counted),"
                            + " queue depths are not observable",
                    network.hosts().get(0).name(),
                    network.hosts().get(1).name(),
                    o.calibration().baseNs() / 1e3,
                    o.calibration().rateBps() / 1e9));
            for (LabResults.FlowResult f : flows) {
                if (f.endNs() >= 0) {
                    finished++;
                    delivered += f.bytes();
                }
            }
        }
        LabResults.Counters counters = new LabResults.Counters(
                flows.size(),
                finished,
                delivered,
                tx + fc[0],
                retransmitted + fc[1],
                timeouts + fc[2],
                spurious + fc[7],
                naks + fc[3],
                fc[4],
                fc[5],
                fc[6] + link[3] + fc[10],
                link[2] + fc[9],
                link[1] + fc[8],
                0);
        return new LabResults(
                LabResults.FORMAT,
                running.backend(),
                lab.seed(),
                lab,
                endNs,
                flows,
                Percentiles.buckets(flows),
                results,
                counters,
                throughput,
                new LabResults.TimeSeries("bytes", 0, List.of()),
                notes.isEmpty() ? null : List.copyOf(notes));
    }

    /**
     * What of the lab's links a real-time run does not emulate, as a note, or null when it emulates
     * all of them: each host's link to its switch is emulated on the host's vSwitch uplink (perftest
     * runs and flow agents); links between switches have no counterpart in real time, nor do the
     * links of a host with more than one.
     */
    static String notApplied(LabNetwork network) {
        List<String> parts = new ArrayList<>();
        List<LabNetwork.Link> between = LabPlans.switchLinks(network);
        if (!between.isEmpty()) {
            parts.add("the " + between.size() + " links between switches (rate, delay, buffer" + what(between)
                    + ") are modelled by the virtual backend only and were not applied");
        }
        List<String> multi = new ArrayList<>();
        for (LabNetwork.LabHost h : network.hosts()) {
            if (LabPlans.hostLink(network, h) == null) {
                multi.add(h.name());
            }
        }
        if (!multi.isEmpty()) {
            parts.add("hosts " + multi + " have more than one link; their links were not applied");
        }
        long shortest = Long.MAX_VALUE;
        for (LabNetwork.LabHost h : network.hosts()) {
            LinkSpec l = LabPlans.hostLink(network, h);
            if (l != null && l.delayNs() != null && l.delayNs() > 0 && LinkEgress.realTimeDelayNs(l) == 0) {
                shortest = Math.min(shortest, l.delayNs());
            }
        }
        if (shortest != Long.MAX_VALUE) {
            parts.add("host link delays under " + LinkEgress.MIN_REAL_TIME_DELAY_NS / 1000 + " us (" + shortest
                    + " ns here) were not applied: a real-time timer wakes later than that, so the machine's"
                    + " own path latency stands in for them");
        }
        if (parts.isEmpty()) {
            return null;
        }
        return String.join("; ", parts)
                + " (each host's link to its switch is emulated on its vSwitch uplink, seeded with the lab's seed)";
    }

    /** ", ECN marking", ", faults" or both, when some of {@code links} ask for them. */
    private static String what(List<LabNetwork.Link> links) {
        boolean faults = false;
        boolean ecn = false;
        for (LabNetwork.Link l : links) {
            faults |= l.spec().faults() != null || l.spec().controlFaults() != null;
            ecn |= l.spec().ecn() != null;
        }
        return (ecn ? ", ECN marking" : "") + (faults ? ", faults" : "");
    }

    private static boolean verified(Transfer t) {
        return t.options().test().equals("send_lat") || t.byteExact();
    }

    private Transfer transfer(int index, WorkloadSpec.Perftest p) {
        String test = switch (p.test()) {
            case "writeBw", "msgRate" -> "write_bw";
            case "readBw" -> "read_bw";
            case "sendLat" -> "send_lat";
            default -> throw new LabException("workloads[" + index + "].test", "unknown perftest " + p.test());
        };
        int size = p.sizeBytes() == null ? 65536 : p.sizeBytes();
        long iterations = p.iterations() == null ? 1000 : p.iterations();
        int buffer = test.equals("send_lat")
                ? Math.max(2 * size, 4096)
                : (int) Math.min(8L << 20, Math.max(size, (long) size * iterations));
        buffer = buffer / size * size;
        if (test.equals("send_lat")) {
            buffer = Math.max(buffer, 2 * size);
        }
        TransferOptions o = new TransferOptions(
                test,
                size,
                iterations,
                buffer,
                Boolean.TRUE.equals(p.verify()),
                0,
                lab.seed(),
                Duration.ofSeconds(120));
        try {
            return running.transfer(running.host(p.client()), running.host(p.server()), o);
        } catch (LabException e) {
            throw e;
        } catch (Exception e) {
            throw new LabException("workloads[" + index + "]", "perftest did not run: " + e.getMessage(), e);
        }
    }

    private static LabResults.PerftestResult result(WorkloadSpec.Perftest p, Transfer t) {
        TransferOptions o = t.options();
        double gbps = 0;
        double mps = 0;
        double p50 = 0;
        double p99 = 0;
        if (o.test().equals("send_lat")) {
            Matcher m = LAT_ROW.matcher(t.clientOutput());
            if (m.find()) {
                p50 = Double.parseDouble(m.group(3));
                p99 = Double.parseDouble(m.group(4));
            }
        } else {
            Matcher m = BW_ROW.matcher(t.clientOutput());
            if (m.find()) {
                gbps = Double.parseDouble(m.group(3));
                mps = Double.parseDouble(m.group(4)) * 1e6;
            }
        }
        return new LabResults.PerftestResult(
                p.test(),
                p.client(),
                p.server(),
                o.sizeBytes(),
                o.iterations(),
                gbps,
                mps,
                p50,
                p99,
                t.verifiedBytes().orElse(0),
                0);
    }

    @Override
    public void close() {
        running.close();
    }

    /** An ENI whose vNIC runs in a host process: its spec, not its device. */
    private record Eni(LabNetwork.LabEni spec) implements EniHandle {
        @Override
        public Device device() {
            throw new LabException(
                    "",
                    "ENI " + spec.id() + " runs in a host process of a real-time backend; its"
                            + " verbs device lives there (use transfers, or the virtual backend for in-process devices)");
        }

        @Override
        public <T> T call(Function<Device, T> action) {
            return action.apply(device());
        }
    }
}
