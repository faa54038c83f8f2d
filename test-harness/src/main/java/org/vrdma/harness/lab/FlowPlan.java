package org.vrdma.harness.lab;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The flows of a lab's flow workloads ({@code incast}, {@code allToAll}, {@code poisson}, {@code
 * flows}) as a list fixed before the run, for backends that must hand every host its part up front
 * (the real-time ones, whose hosts are separate processes). Deterministic for the lab and its seed:
 * Poisson arrivals and flow sizes come from one {@link SplittableRandom} per workload and sending
 * host. Perftest workloads are not flows and are left out.
 */
public final class FlowPlan {
    private FlowPlan() {}

    /**
     * One planned flow.
     *
     * @param id position in start order, from 0
     * @param workload {@code w<index>} of its workload
     * @param src sending host (index into the network's hosts)
     * @param dst receiving host
     * @param srcEni {@code host/eni} of the sender
     * @param dstEni {@code host/eni} of the receiver
     * @param startNs start after the run's beginning
     * @param cc the workload's or flow's congestion control, or null for the ENI's
     */
    public record PlannedFlow(
            int id,
            String workload,
            int src,
            int dst,
            String srcEni,
            String dstEni,
            long bytes,
            long startNs,
            CcSpec cc) {}

    /**
     * The flows of {@code lab} (defaults applied) on {@code network}, sorted by start time.
     *
     * @param poissonRateBps the host link rate Poisson loads are a fraction of
     */
    public static List<PlannedFlow> of(Lab lab, LabNetwork network, double poissonRateBps) {
        List<PlannedFlow> out = new ArrayList<>();
        List<WorkloadSpec> ws = lab.workloads();
        long durationNs = lab.durationUs() * 1000;
        for (int i = 0; i < ws.size(); i++) {
            String name = "w" + i;
            String path = "workloads[" + i + "]";
            switch (ws.get(i)) {
                case WorkloadSpec.Perftest p -> {
                    // not a flow workload
                }
                case WorkloadSpec.Incast w -> {
                    int receiver = index(network, w.receiver(), path + ".receiver");
                    List<Integer> senders = new ArrayList<>();
                    if (w.senders() != null) {
                        for (String s : w.senders()) {
                            senders.add(index(network, s, path + ".senders"));
                        }
                    } else {
                        for (int h = 0;
                                senders.size() < w.senderCount()
                                        && h < network.hosts().size();
                                h++) {
                            if (h != receiver) {
                                senders.add(h);
                            }
                        }
                    }
                    int rounds = w.rounds() == null ? 1 : w.rounds();
                    long interval = w.intervalUs() == null ? 0 : w.intervalUs() * 1000;
                    for (int r = 0; r < rounds; r++) {
                        for (int s : senders) {
                            out.add(flow(
                                    network, name, s, receiver, w.flowBytes(), us(w.startUs()) + r * interval, w.cc()));
                        }
                    }
                }
                case WorkloadSpec.AllToAll w -> {
                    List<Integer> members = members(network, w.hosts(), path + ".hosts");
                    for (int a : members) {
                        for (int b : members) {
                            if (a != b) {
                                out.add(flow(network, name, a, b, w.flowBytes(), us(w.startUs()), w.cc()));
                            }
                        }
                    }
                }
                case WorkloadSpec.Poisson w -> {
                    FlowSizeCdf cdf = w.flowSizeCdf();
                    List<Integer> members = members(network, w.hosts(), path + ".hosts");
                    long start = us(w.startUs());
                    long stop = w.stopUs() == null ? durationNs : w.stopUs() * 1000;
                    double meanGapNs = cdf.meanBytes() * 8 / (w.load() * poissonRateBps) * 1e9;
                    for (int m = 0; m < members.size(); m++) {
                        int src = members.get(m);
                        SplittableRandom rng = new SplittableRandom(lab.seed() * 1_000_003L + i * 7919L + m);
                        for (long t = start + gapNs(rng, meanGapNs); t < stop; t += gapNs(rng, meanGapNs)) {
                            int dst;
                            do {
                                dst = members.get(rng.nextInt(members.size()));
                            } while (dst == src);
                            out.add(flow(network, name, src, dst, cdf.sample(rng), t, w.cc()));
                        }
                    }
                }
                case WorkloadSpec.Flows w -> {
                    for (int f = 0; f < w.flows().size(); f++) {
                        WorkloadSpec.Flow fl = w.flows().get(f);
                        String fp = path + ".flows[" + f + "]";
                        out.add(flow(
                                network,
                                name,
                                index(network, fl.src(), fp + ".src"),
                                index(network, fl.dst(), fp + ".dst"),
                                fl.bytes(),
                                us(fl.startUs()),
                                fl.cc() != null ? fl.cc() : w.cc()));
                    }
                }
            }
        }
        out.sort(Comparator.comparingLong(PlannedFlow::startNs));
        List<PlannedFlow> numbered = new ArrayList<>(out.size());
        for (int i = 0; i < out.size(); i++) {
            PlannedFlow f = out.get(i);
            numbered.add(new PlannedFlow(i, f.workload, f.src, f.dst, f.srcEni, f.dstEni, f.bytes, f.startNs, f.cc));
        }
        return numbered;
    }

    private static PlannedFlow flow(
            LabNetwork n, String workload, int src, int dst, long bytes, long startNs, CcSpec cc) {
        return new PlannedFlow(
                -1,
                workload,
                src,
                dst,
                n.hosts().get(src).enis().getFirst().id(),
                n.hosts().get(dst).enis().getFirst().id(),
                bytes,
                startNs,
                cc);
    }

    private static long gapNs(SplittableRandom rng, double meanNs) {
        return Math.max(1, Math.round(-Math.log(1 - rng.nextDouble()) * meanNs));
    }

    private static long us(Long v) {
        return v == null ? 0 : v * 1000;
    }

    private static List<Integer> members(LabNetwork n, List<String> hosts, String path) {
        List<Integer> m = new ArrayList<>();
        if (hosts == null) {
            for (int h = 0; h < n.hosts().size(); h++) {
                m.add(h);
            }
        } else {
            for (String h : hosts) {
                m.add(index(n, h, path));
            }
        }
        return m;
    }

    /** Index of the host of ENI reference {@code ref} ({@code h3} or {@code h3/eni0}). */
    private static int index(LabNetwork n, String ref, String path) {
        LabNetwork.LabEni eni = n.eni(ref, path);
        for (int h = 0; h < n.hosts().size(); h++) {
            if (n.hosts().get(h).name().equals(eni.host())) {
                return h;
            }
        }
        throw new LabException(path, "no host " + eni.host());
    }
}
