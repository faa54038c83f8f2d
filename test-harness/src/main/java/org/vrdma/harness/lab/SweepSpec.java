package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a lab once per combination of the listed values (each list left out keeps the lab's own
 * value), for comparisons such as DCQCN vs TIMELY vs HPCC at 30% and 50% load, or go-back-N vs
 * selective repeat over a loss sweep. Every variant uses the lab's seed.
 *
 * @param cc lab-wide congestion control of each variant
 * @param load offered load of every {@code poisson} workload
 * @param recovery transport recovery ({@code sr}, {@code gbn})
 * @param loss random loss probability of data packets on every link
 * @param pfc priority flow control of the fabric ({@code {"enabled": false}} for none)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SweepSpec(
        List<CcSpec> cc, List<Double> load, List<String> recovery, List<Double> loss, List<PfcSpec> pfc) {

    /** A sweep without PFC variants. */
    public SweepSpec(List<CcSpec> cc, List<Double> load, List<String> recovery, List<Double> loss) {
        this(cc, load, recovery, loss, null);
    }

    /** One run of a sweep: its label ({@code cc=dcqcn load=0.3}) and the lab without the sweep. */
    public record Variant(String label, Lab lab) {}

    /** The variants of {@code lab} (defaults applied); a lab without a sweep is one variant labelled by its name. */
    public static List<Variant> expand(Lab lab) {
        SweepSpec s = lab.sweep();
        Lab base = lab.withSweep(null);
        List<Variant> out = new ArrayList<>();
        out.add(new Variant("", base));
        if (s == null) {
            return List.of(new Variant(lab.name(), base));
        }
        if (s.cc != null && !s.cc.isEmpty()) {
            out = cross(out, s.cc, (l, v) -> l.withCc(v), v -> "cc=" + v.algorithm());
        }
        if (s.load != null && !s.load.isEmpty()) {
            out = cross(out, s.load, SweepSpec::withLoad, v -> "load=" + v);
        }
        if (s.recovery != null && !s.recovery.isEmpty()) {
            out = cross(
                    out,
                    s.recovery,
                    (l, v) -> l.withTransport(new TransportSpec(
                            v,
                            l.transport().mtuBytes(),
                            l.transport().windowBytes(),
                            l.transport().ackCoalescePackets(),
                            l.transport().minRtoUs(),
                            l.transport().messageBytes(),
                            l.transport().sendQueueDepth(),
                            l.transport().payload())),
                    v -> "recovery=" + v);
        }
        if (s.loss != null && !s.loss.isEmpty()) {
            out = cross(out, s.loss, SweepSpec::withLoss, v -> "loss=" + v);
        }
        if (s.pfc != null && !s.pfc.isEmpty()) {
            out = cross(out, s.pfc, (l, v) -> l.withPfc(v.on() ? v : null), v -> "pfc=" + v.label());
        }
        return out;
    }

    private interface Apply<T> {
        Lab apply(Lab lab, T value);
    }

    private interface Label<T> {
        String label(T value);
    }

    private static <T> List<Variant> cross(List<Variant> in, List<T> values, Apply<T> apply, Label<T> label) {
        List<Variant> out = new ArrayList<>();
        for (Variant v : in) {
            for (T value : values) {
                String l = v.label().isEmpty() ? label.label(value) : v.label() + " " + label.label(value);
                out.add(new Variant(l, apply.apply(v.lab(), value)));
            }
        }
        return out;
    }

    static Lab withLoad(Lab lab, double load) {
        List<WorkloadSpec> ws = new ArrayList<>();
        for (WorkloadSpec w : lab.workloads()) {
            if (w instanceof WorkloadSpec.Poisson p) {
                ws.add(p.withLoad(load));
            } else {
                ws.add(w);
            }
        }
        return lab.withWorkloads(ws);
    }

    static Lab withLoss(Lab lab, double loss) {
        TopologySpec t = lab.topology();
        return lab.withTopology(new TopologySpec(
                t.type(),
                t.hosts(),
                t.leftHosts(),
                t.rightHosts(),
                t.leaves(),
                t.spines(),
                t.hostsPerLeaf(),
                t.k(),
                t.pods(),
                t.hostsPerTor(),
                lossy(TopologyGenerator.hostLink(t), loss),
                lossy(TopologyGenerator.fabricLink(t), loss),
                lossy(TopologyGenerator.bottleneckLink(t), loss)));
    }

    private static LinkSpec lossy(LinkSpec l, double loss) {
        LinkSpec.FaultSpec f = l.faults() == null
                ? LinkSpec.FaultSpec.randomLoss(loss)
                : new LinkSpec.FaultSpec(
                        loss,
                        l.faults().burstLoss(),
                        l.faults().meanBurstPackets(),
                        l.faults().duplicate(),
                        l.faults().reorder(),
                        l.faults().reorderDelayNs(),
                        l.faults().jitterNs());
        return new LinkSpec(l.rateGbps(), l.delayNs(), l.bufferBytes(), l.ecn(), f, l.controlFaults());
    }
}
