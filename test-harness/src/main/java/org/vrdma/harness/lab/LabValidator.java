package org.vrdma.harness.lab;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.vrdma.cc.CongestionControls;

/**
 * Checks a lab (with {@link Lab#withDefaults() defaults} applied) and throws a {@link LabException}
 * naming the first bad field by its JSON path and saying what is allowed.
 */
public final class LabValidator {
    private static final Set<String> TOPOLOGIES = Set.of("pair", "star", "dumbbell", "leafSpine", "fatTree");
    private static final Set<String> PERFTESTS = Set.of("writeBw", "readBw", "sendLat", "msgRate");
    private static final Set<Integer> MTUS = Set.of(256, 512, 1024, 2048, 4096);

    private LabValidator() {}

    public static void validate(Lab lab) {
        if (lab.name() == null || !lab.name().matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new LabException("name", "must be 1..64 letters, digits, '.', '_' or '-': " + lab.name());
        }
        positive("durationUs", lab.durationUs());
        nonNegative("drainUs", lab.drainUs());
        positive("sampleIntervalUs", lab.sampleIntervalUs());
        vpcs(lab.vpcs());
        if (lab.topology() == null) {
            throw new LabException("topology", "is required (type: " + String.join(", ", sorted(TOPOLOGIES)) + ")");
        }
        int hosts = topology(lab.topology());
        hosts(lab, hosts);
        transport(lab.transport());
        cc("cc", lab.cc());
        pfc("pfc", lab.pfc());
        for (int i = 0; i < lab.workloads().size(); i++) {
            workload("workloads[" + i + "]", lab.workloads().get(i), hosts, lab);
        }
        sweep(lab.sweep());
    }

    private static void sweep(SweepSpec s) {
        if (s == null) {
            return;
        }
        if (s.cc() != null) {
            for (int i = 0; i < s.cc().size(); i++) {
                cc("sweep.cc[" + i + "]", s.cc().get(i));
            }
        }
        if (s.load() != null) {
            for (int i = 0; i < s.load().size(); i++) {
                Double v = s.load().get(i);
                if (v == null || !(v > 0 && v <= 1)) {
                    throw new LabException("sweep.load[" + i + "]", "must be in (0, 1]: " + v);
                }
            }
        }
        if (s.recovery() != null) {
            for (int i = 0; i < s.recovery().size(); i++) {
                String v = s.recovery().get(i);
                if (!"sr".equals(v) && !"gbn".equals(v)) {
                    throw new LabException("sweep.recovery[" + i + "]", "must be sr or gbn: " + v);
                }
            }
        }
        if (s.pfc() != null) {
            for (int i = 0; i < s.pfc().size(); i++) {
                if (s.pfc().get(i) == null) {
                    throw new LabException("sweep.pfc[" + i + "]", "must be a PFC object, e.g. {\"enabled\": false}");
                }
                pfc("sweep.pfc[" + i + "]", s.pfc().get(i));
            }
        }
        if (s.loss() != null) {
            for (int i = 0; i < s.loss().size(); i++) {
                probability("sweep.loss[" + i + "]", s.loss().get(i));
                if (s.loss().get(i) == null) {
                    throw new LabException("sweep.loss[" + i + "]", "must be a probability in [0, 1]");
                }
            }
        }
    }

    /** Priority flow control: static or dynamic thresholds, never both; XON below XOFF. */
    static void pfc(String p, PfcSpec f) {
        if (f == null) {
            return;
        }
        if (f.enabled() == null) {
            throw new LabException(p + ".enabled", "is required: true or false");
        }
        positive(p + ".xoffBytes", f.xoffBytes() == null ? 1L : f.xoffBytes());
        nonNegative(p + ".xonBytes", f.xonBytes());
        positive(p + ".headroomBytes", f.headroomBytes() == null ? 1L : f.headroomBytes());
        if (f.pauseQuanta() != null) {
            range(p + ".pauseQuanta", f.pauseQuanta(), 1, PfcSpec.MAX_QUANTA);
        }
        if (f.alpha() != null || f.switchBufferBytes() != null) {
            if (f.alpha() == null || !(f.alpha() > 0 && f.alpha() <= 64)) {
                throw new LabException(
                        p + ".alpha", "dynamic thresholds need alpha in (0, 64] with switchBufferBytes: " + f.alpha());
            }
            positive(p + ".switchBufferBytes", f.switchBufferBytes());
            if (f.xoffBytes() != null || f.xonBytes() != null) {
                throw new LabException(
                        p + (f.xoffBytes() != null ? ".xoffBytes" : ".xonBytes"),
                        "static thresholds do not go with dynamic ones (alpha, switchBufferBytes): drop one");
            }
            nonNegative(p + ".xonOffsetBytes", f.xonOffsetBytes());
        } else {
            if (f.xonOffsetBytes() != null) {
                throw new LabException(
                        p + ".xonOffsetBytes", "is for dynamic thresholds (alpha, switchBufferBytes); use xonBytes");
            }
            if (f.xonBytes() != null && f.xonBytes() >= f.xoff()) {
                throw new LabException(p + ".xonBytes", "must be below xoffBytes " + f.xoff() + ": " + f.xonBytes());
            }
        }
    }

    private static void vpcs(List<VpcSpec> vpcs) {
        Set<String> names = new HashSet<>();
        Set<Integer> vnis = new HashSet<>();
        for (int i = 0; i < vpcs.size(); i++) {
            VpcSpec v = vpcs.get(i);
            String p = "vpcs[" + i + "]";
            if (v.name() == null || v.name().isBlank()) {
                throw new LabException(p + ".name", "is required");
            }
            if (!names.add(v.name())) {
                throw new LabException(p + ".name", "VPC " + v.name() + " is defined twice");
            }
            if (v.vni() == null || v.vni() < 1 || v.vni() > 0xFFFFFF) {
                throw new LabException(p + ".vni", "must be 1..16777215: " + v.vni());
            }
            if (!vnis.add(v.vni())) {
                throw new LabException(p + ".vni", "VNI " + v.vni() + " is used by two VPCs");
            }
            if (v.cidr() == null) {
                throw new LabException(p + ".cidr", "is required, e.g. 10.0.0.0/16");
            }
            try {
                Ipv4.prefixLength(v.cidr());
            } catch (IllegalArgumentException e) {
                throw new LabException(p + ".cidr", e.getMessage());
            }
        }
    }

    private static int topology(TopologySpec t) {
        String p = "topology";
        if (t.type() == null || !TOPOLOGIES.contains(t.type())) {
            throw new LabException(p + ".type", "must be one of " + sorted(TOPOLOGIES) + ": " + t.type());
        }
        switch (t.type()) {
            case "star" -> range(p + ".hosts", t.hosts(), 2, 4096);
            case "dumbbell" -> {
                range(p + ".leftHosts", t.leftHosts(), 1, 4096);
                range(p + ".rightHosts", t.rightHosts(), 1, 4096);
            }
            case "leafSpine" -> {
                range(p + ".leaves", t.leaves(), 1, 1024);
                range(p + ".spines", t.spines(), 1, 256);
                range(p + ".hostsPerLeaf", t.hostsPerLeaf(), 1, 1024);
            }
            case "fatTree" -> {
                range(p + ".k", t.k(), 2, 64);
                if (t.k() % 2 != 0) {
                    throw new LabException(p + ".k", "must be even: " + t.k());
                }
                if (t.pods() != null) {
                    range(p + ".pods", t.pods(), 1, t.k() * 8);
                }
                if (t.hostsPerTor() != null) {
                    range(p + ".hostsPerTor", t.hostsPerTor(), 1, 1024);
                }
            }
            default -> {}
        }
        link(p + ".hostLink", t.hostLink());
        link(p + ".fabricLink", t.fabricLink());
        link(p + ".bottleneckLink", t.bottleneckLink());
        int hosts = TopologyGenerator.hostCount(t);
        if (hosts < 2 || hosts > 65_536) {
            throw new LabException(p, "makes " + hosts + " hosts; 2..65536 are allowed");
        }
        return hosts;
    }

    /** One link as a lab file gives it (also {@code ./vrdma host --host-link}); {@code p} names it in errors. */
    public static void validateLink(String p, LinkSpec l) {
        link(p, l);
    }

    private static void link(String p, LinkSpec l) {
        if (l == null) {
            return;
        }
        if (l.rateGbps() != null && !(l.rateGbps() > 0 && l.rateGbps() <= 10_000)) {
            throw new LabException(p + ".rateGbps", "must be in (0, 10000]: " + l.rateGbps());
        }
        nonNegative(p + ".delayNs", l.delayNs());
        if (l.bufferBytes() != null && l.bufferBytes() < 9000) {
            throw new LabException(p + ".bufferBytes", "must hold a jumbo frame (>= 9000): " + l.bufferBytes());
        }
        if (l.ecn() != null) {
            LinkSpec.EcnSpec e = l.ecn();
            if (e.kMinBytes() == null || e.kMinBytes() < 0) {
                throw new LabException(p + ".ecn.kMinBytes", "is required and must not be negative: " + e.kMinBytes());
            }
            if (e.kMaxBytes() != null && e.kMaxBytes() < e.kMinBytes()) {
                throw new LabException(
                        p + ".ecn.kMaxBytes", "must be at least kMinBytes " + e.kMinBytes() + ": " + e.kMaxBytes());
            }
            probability(p + ".ecn.pMax", e.pMax());
        }
        faults(p + ".faults", l.faults());
        faults(p + ".controlFaults", l.controlFaults());
    }

    private static void faults(String p, LinkSpec.FaultSpec f) {
        if (f == null) {
            return;
        }
        probability(p + ".loss", f.loss());
        probability(p + ".burstLoss", f.burstLoss());
        probability(p + ".duplicate", f.duplicate());
        probability(p + ".reorder", f.reorder());
        if (f.meanBurstPackets() != null && !(f.meanBurstPackets() >= 1)) {
            throw new LabException(p + ".meanBurstPackets", "must be at least 1: " + f.meanBurstPackets());
        }
        if (f.reorder() != null && f.reorder() > 0 && (f.reorderDelayNs() == null || f.reorderDelayNs() <= 0)) {
            throw new LabException(p + ".reorderDelayNs", "must be positive when reorder is set");
        }
        nonNegative(p + ".jitterNs", f.jitterNs());
    }

    private static void hosts(Lab lab, int hostCount) {
        Set<String> vpcNames = new HashSet<>();
        lab.vpcs().forEach(v -> vpcNames.add(v.name()));
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < lab.hosts().size(); i++) {
            HostSpec h = lab.hosts().get(i);
            String p = "hosts[" + i + "]";
            if (h.name() == null
                    || !h.name().matches("h\\d+")
                    || Integer.parseInt(h.name().substring(1)) >= hostCount) {
                throw new LabException(
                        p + ".name", "must name a host of the topology (h0..h" + (hostCount - 1) + "): " + h.name());
            }
            if (!seen.add(h.name())) {
                throw new LabException(p + ".name", "host " + h.name() + " is listed twice");
            }
            if (h.enis() == null || h.enis().isEmpty()) {
                throw new LabException(p + ".enis", "must list at least one ENI");
            }
            Set<String> eniNames = new HashSet<>();
            for (int e = 0; e < h.enis().size(); e++) {
                HostSpec.EniSpec eni = h.enis().get(e);
                String ep = p + ".enis[" + e + "]";
                String name = eni.name() == null ? "eni" + e : eni.name();
                if (!eniNames.add(name)) {
                    throw new LabException(ep + ".name", "ENI " + name + " is defined twice on " + h.name());
                }
                if (eni.vpc() != null && !vpcNames.contains(eni.vpc())) {
                    throw new LabException(
                            ep + ".vpc", "no VPC named " + eni.vpc() + " (have " + sorted(vpcNames) + ")");
                }
                if (eni.ipv4() != null) {
                    try {
                        Ipv4.parse(eni.ipv4());
                    } catch (IllegalArgumentException ex) {
                        throw new LabException(ep + ".ipv4", ex.getMessage());
                    }
                }
                cc(ep + ".cc", eni.cc());
            }
        }
    }

    private static void transport(TransportSpec t) {
        if (!t.recovery().equals("sr") && !t.recovery().equals("gbn")) {
            throw new LabException(
                    "transport.recovery", "must be sr (selective repeat) or gbn (go-back-N): " + t.recovery());
        }
        if (!MTUS.contains(t.mtuBytes())) {
            throw new LabException("transport.mtuBytes", "must be one of " + sorted(MTUS) + ": " + t.mtuBytes());
        }
        nonNegative("transport.windowBytes", t.windowBytes());
        range("transport.ackCoalescePackets", t.ackCoalescePackets(), 1, 1024);
        positive("transport.minRtoUs", t.minRtoUs());
        range("transport.messageBytes", t.messageBytes(), 1, 1 << 30);
        range("transport.sendQueueDepth", t.sendQueueDepth(), 1, 4096);
        if (t.payload() != null
                && !t.payload().equals(TransportSpec.PAYLOAD_BYTES)
                && !t.payload().equals(TransportSpec.PAYLOAD_LENGTH)) {
            throw new LabException(
                    "transport.payload",
                    "must be bytes (payload bytes carried) or length (virtual time: payload lengths only): "
                            + t.payload());
        }
    }

    static void cc(String p, CcSpec cc) {
        if (cc == null || cc.isNone()) {
            return;
        }
        CongestionControls registry = CongestionControls.defaults();
        if (!registry.contains(cc.algorithm())) {
            throw new LabException(
                    p + ".algorithm",
                    "unknown algorithm " + cc.algorithm() + " (have none, "
                            + String.join(", ", sorted(registry.names())) + ")");
        }
        try {
            registry.configure(cc.algorithm(), cc.config());
        } catch (RuntimeException e) {
            throw new LabException(p + ".config", e.getMessage(), e);
        }
    }

    private static void workload(String p, WorkloadSpec w, int hosts, Lab lab) {
        if (w == null) {
            throw new LabException(p, "is empty");
        }
        cc(p + ".cc", w.cc());
        switch (w) {
            case WorkloadSpec.Perftest t -> {
                if (t.test() == null || !PERFTESTS.contains(t.test())) {
                    throw new LabException(p + ".test", "must be one of " + sorted(PERFTESTS) + ": " + t.test());
                }
                hostRef(p + ".client", t.client(), hosts);
                hostRef(p + ".server", t.server(), hosts);
                if (t.sizeBytes() != null) {
                    range(p + ".sizeBytes", t.sizeBytes(), 1, 1 << 30);
                }
                if (t.iterations() != null) {
                    range(p + ".iterations", t.iterations(), 1, 100_000_000);
                }
                if (t.qps() != null) {
                    range(p + ".qps", t.qps(), 1, 1024);
                }
                nonNegative(p + ".startUs", t.startUs());
                if (Boolean.TRUE.equals(t.verify())
                        && lab.transport() != null
                        && lab.transport().lengthOnly()) {
                    throw new LabException(
                            p + ".verify", "needs the payload's bytes: transport.payload must be bytes, not length");
                }
            }
            case WorkloadSpec.Incast t -> {
                hostRef(p + ".receiver", t.receiver(), hosts);
                if (t.senders() != null) {
                    for (int i = 0; i < t.senders().size(); i++) {
                        hostRef(p + ".senders[" + i + "]", t.senders().get(i), hosts);
                    }
                } else {
                    range(p + ".senderCount", t.senderCount(), 1, hosts - 1);
                }
                positive(p + ".flowBytes", t.flowBytes());
                if (t.rounds() != null) {
                    range(p + ".rounds", t.rounds(), 1, 1_000_000);
                }
                nonNegative(p + ".intervalUs", t.intervalUs());
                nonNegative(p + ".startUs", t.startUs());
            }
            case WorkloadSpec.AllToAll t -> {
                if (t.hosts() != null) {
                    for (int i = 0; i < t.hosts().size(); i++) {
                        hostRef(p + ".hosts[" + i + "]", t.hosts().get(i), hosts);
                    }
                }
                positive(p + ".flowBytes", t.flowBytes());
                nonNegative(p + ".startUs", t.startUs());
            }
            case WorkloadSpec.Poisson t -> {
                if (t.cdf() == null && t.cdfPoints() == null) {
                    throw new LabException(p + ".cdf", "is required: websearch, fbHadoop or a CDF file");
                }
                try {
                    t.flowSizeCdf();
                } catch (IllegalArgumentException e) {
                    throw new LabException(p + (t.cdfPoints() != null ? ".cdfPoints" : ".cdf"), e.getMessage(), e);
                }
                if (t.load() == null || !(t.load() > 0 && t.load() <= 1)) {
                    throw new LabException(p + ".load", "must be in (0, 1] (share of the host link rate): " + t.load());
                }
                if (t.hosts() != null) {
                    if (t.hosts().size() < 2) {
                        throw new LabException(p + ".hosts", "needs at least two hosts");
                    }
                    for (int i = 0; i < t.hosts().size(); i++) {
                        hostRef(p + ".hosts[" + i + "]", t.hosts().get(i), hosts);
                    }
                }
                nonNegative(p + ".startUs", t.startUs());
                if (t.stopUs() != null && t.stopUs() <= (t.startUs() == null ? 0 : t.startUs())) {
                    throw new LabException(p + ".stopUs", "must be after startUs: " + t.stopUs());
                }
            }
            case WorkloadSpec.Flows t -> {
                if (t.flows() == null || t.flows().isEmpty()) {
                    throw new LabException(p + ".flows", "must list at least one flow");
                }
                for (int i = 0; i < t.flows().size(); i++) {
                    WorkloadSpec.Flow f = t.flows().get(i);
                    String fp = p + ".flows[" + i + "]";
                    hostRef(fp + ".src", f.src(), hosts);
                    hostRef(fp + ".dst", f.dst(), hosts);
                    if (f.src().equals(f.dst())) {
                        throw new LabException(fp + ".dst", "must differ from src " + f.src());
                    }
                    positive(fp + ".bytes", f.bytes());
                    nonNegative(fp + ".startUs", f.startUs());
                    cc(fp + ".cc", f.cc());
                }
            }
        }
    }

    private static void hostRef(String p, String ref, int hosts) {
        if (ref == null) {
            throw new LabException(p, "is required (a host such as h0, or h0/eni0)");
        }
        String host = ref.contains("/") ? ref.substring(0, ref.indexOf('/')) : ref;
        if (!host.matches("h\\d{1,6}") || Integer.parseInt(host.substring(1)) >= hosts) {
            throw new LabException(p, "no host " + host + " in the topology (h0..h" + (hosts - 1) + ")");
        }
    }

    private static void range(String p, Integer v, int min, int max) {
        if (v == null || v < min || v > max) {
            throw new LabException(p, "must be " + min + ".." + max + ": " + v);
        }
    }

    private static void positive(String p, Long v) {
        if (v == null || v <= 0) {
            throw new LabException(p, "must be positive: " + v);
        }
    }

    private static void nonNegative(String p, Long v) {
        if (v != null && v < 0) {
            throw new LabException(p, "must not be negative: " + v);
        }
    }

    private static void probability(String p, Double v) {
        if (v != null && !(v >= 0 && v <= 1)) {
            throw new LabException(p, "must be a probability in [0, 1]: " + v);
        }
    }

    private static List<String> sorted(Set<?> s) {
        return s.stream().map(String::valueOf).sorted().toList();
    }
}
