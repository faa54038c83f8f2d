package org.vrdma.harness.lab.report;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.vrdma.harness.lab.CcSpec;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabNetwork;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.harness.lab.PfcSpec;
import org.vrdma.harness.lab.SweepSpec;
import org.vrdma.harness.lab.TransportSpec;
import org.vrdma.harness.lab.VpcSpec;
import org.vrdma.harness.lab.WorkloadSpec;

/**
 * What a lab resolves to, in lines for a person to check before a long run ({@code ./vrdma lab
 * validate}): seed and times, the topology with its link kinds and rates, VPCs, transport,
 * congestion control per ENI, PFC, every workload with its parameters, and the sweep's runs. Fields
 * are named as in lab files.
 */
public final class LabDescription {
    /** ENI names listed per congestion-control setting before the rest are only counted. */
    private static final int MAX_ENIS_NAMED = 6;
    /** Explicit flows listed per workload before the rest are only counted. */
    private static final int MAX_FLOWS_LISTED = 8;

    private LabDescription() {}

    /** The lines describing {@code lab} (defaults applied) as {@code net} resolves it. */
    public static List<String> lines(Lab lab, LabNetwork net) {
        List<String> out = new ArrayList<>();
        out.add("lab " + lab.name() + (lab.description() != null ? ": " + lab.description() : ""));
        out.add(String.format(
                Locale.ROOT,
                "seed %d; workloads start traffic for %d us, then up to %d us to drain; samples every %d us",
                lab.seed(),
                lab.durationUs(),
                lab.drainUs(),
                lab.sampleIntervalUs()));

        long switches = net.nodes().stream().filter(n -> !n.host()).count();
        out.add(String.format(
                Locale.ROOT,
                "topology: %s, %s, %s, %s",
                lab.topology().type(),
                count(net.hosts().size(), "host"),
                count(switches, "switch"),
                count(net.links().size(), "link")));
        // Links grouped by kind and spec: "33 host links: 100 Gbit/s, 1000 ns, buffer 4194304 B, ...".
        Map<String, Integer> linkGroups = new LinkedHashMap<>();
        for (LabNetwork.Link l : net.links()) {
            boolean hostLink =
                    net.nodes().get(l.a()).host() || net.nodes().get(l.b()).host();
            String kind = hostLink ? "host" : "fabric";
            linkGroups.merge(kind + " links: " + link(l.spec()), 1, Integer::sum);
        }
        linkGroups.forEach(
                (what, n) -> out.add("  " + n + " " + (n == 1 ? what.replaceFirst("links:", "link:") : what)));

        for (VpcSpec v : lab.vpcs()) {
            out.add("vpc " + v.name() + ": VNI " + v.vni() + ", " + v.cidr());
        }
        TransportSpec t = lab.transport();
        out.add(String.format(
                Locale.ROOT,
                "transport: recovery %s, MTU %d B, window %s, ACK every %d packets, RTO floor %d us,"
                        + " messages of %d B, send queue %d, payload %s",
                t.recovery(),
                t.mtuBytes(),
                t.windowBytes() == 0 ? "from congestion control" : t.windowBytes() + " B",
                t.ackCoalescePackets(),
                t.minRtoUs(),
                t.messageBytes(),
                t.sendQueueDepth(),
                t.lengthOnly() ? "length (bytes neither written nor checked)" : "bytes"));

        // Congestion control per ENI, grouped by setting.
        boolean oneVpc = lab.vpcs().size() == 1;
        Map<String, List<String>> byCc = new LinkedHashMap<>();
        for (LabNetwork.LabHost h : net.hosts()) {
            for (LabNetwork.LabEni e : h.enis()) {
                byCc.computeIfAbsent(cc(e.cc()), k -> new ArrayList<>())
                        .add(oneVpc ? e.id() : e.id() + " (" + e.vpc() + ")");
            }
        }
        out.add("congestion control per ENI"
                + (lab.sweep() != null
                                && lab.sweep().cc() != null
                                && !lab.sweep().cc().isEmpty()
                        ? " (each sweep run replaces the lab-wide one):"
                        : ":"));
        byCc.forEach((cc, enis) ->
                out.add("  " + cc + ": " + enis.size() + " ENI" + (enis.size() == 1 ? "" : "s") + " " + names(enis)));

        PfcSpec pfc = lab.pfc();
        out.add("pfc: " + (pfc == null || !pfc.on() ? "off" : "on, " + fields(pfc)));

        out.add("workloads: " + lab.workloads().size());
        for (int i = 0; i < lab.workloads().size(); i++) {
            out.addAll(workload(i, lab.workloads().get(i)));
        }

        List<SweepSpec.Variant> runs = SweepSpec.expand(lab);
        if (lab.sweep() == null) {
            out.add("runs: 1");
        } else {
            out.add("runs: " + runs.size() + " ("
                    + String.join(
                            ", ", runs.stream().map(SweepSpec.Variant::label).toList()) + ")");
        }
        return out;
    }

    private static List<String> workload(int index, WorkloadSpec w) {
        List<String> out = new ArrayList<>();
        String head = "  [" + index + "] " + type(w) + ": ";
        switch (w) {
            case WorkloadSpec.Flows f -> {
                out.add(head + f.flows().size() + " flows" + (f.cc() != null ? ", cc " + cc(f.cc()) : ""));
                for (int i = 0; i < f.flows().size() && i < MAX_FLOWS_LISTED; i++) {
                    out.add("      " + fields(f.flows().get(i)));
                }
                if (f.flows().size() > MAX_FLOWS_LISTED) {
                    out.add("      ... and " + (f.flows().size() - MAX_FLOWS_LISTED) + " more");
                }
            }
            case WorkloadSpec.Poisson p -> {
                var cdf = p.flowSizeCdf();
                out.add(head
                        + fields(p)
                        + String.format(
                                Locale.ROOT,
                                " (flow sizes %s: mean %.0f B, median %d B, p99 %d B)",
                                cdf.name(),
                                cdf.meanBytes(),
                                cdf.quantileBytes(50),
                                cdf.quantileBytes(99)));
            }
            default -> out.add(head + fields((Record) w));
        }
        return out;
    }

    private static String type(WorkloadSpec w) {
        return switch (w) {
            case WorkloadSpec.Perftest p -> "perftest";
            case WorkloadSpec.Incast i -> "incast";
            case WorkloadSpec.AllToAll a -> "allToAll";
            case WorkloadSpec.Poisson p -> "poisson";
            case WorkloadSpec.Flows f -> "flows";
        };
    }

    private static String link(LinkSpec s) {
        StringBuilder sb = new StringBuilder(String.format(
                Locale.ROOT, "%s Gbit/s, %d ns, buffer %d B", num(s.rateGbps()), s.delayNs(), s.bufferBytes()));
        if (s.ecn() != null) {
            sb.append(", ECN ").append(fields(s.ecn()));
        }
        if (s.faults() != null) {
            sb.append(", faults ").append(fields(s.faults()));
        }
        if (s.controlFaults() != null) {
            sb.append(", control faults ").append(fields(s.controlFaults()));
        }
        return sb.toString();
    }

    private static String cc(CcSpec cc) {
        if (cc == null || cc.isNone()) {
            return "none";
        }
        return cc.config() == null || cc.config().isEmpty() ? cc.algorithm() : cc.algorithm() + " " + cc.config();
    }

    /** The record's set fields as {@code name=value}, as in lab files; CDF points only counted. */
    private static String fields(Record r) {
        List<String> parts = new ArrayList<>();
        for (RecordComponent c : r.getClass().getRecordComponents()) {
            Object v;
            try {
                v = c.getAccessor().invoke(r);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            if (v == null) {
                continue;
            }
            if (c.getName().equals("cdfPoints") && v instanceof List<?> points) {
                parts.add("cdfPoints=" + points.size() + " points");
            } else if (v instanceof CcSpec cc) {
                parts.add(c.getName() + "=" + cc(cc));
            } else if (v instanceof Double d) {
                parts.add(c.getName() + "=" + num(d));
            } else {
                parts.add(c.getName() + "=" + v);
            }
        }
        return String.join(" ", parts);
    }

    private static String names(List<String> enis) {
        if (enis.size() <= MAX_ENIS_NAMED) {
            return String.join(", ", enis);
        }
        return String.join(", ", enis.subList(0, MAX_ENIS_NAMED)) + ", ... " + enis.getLast();
    }

    private static String count(long n, String what) {
        return n + " " + (n == 1 ? what : what.endsWith("h") ? what + "es" : what + "s");
    }

    private static String num(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }
}
