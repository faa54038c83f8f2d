package org.vrdma.harness.lab;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vswitch.pipeline.EgressConfig;

/**
 * A lab link direction as the egress port that emulates it: the virtual backend's fabric ports
 * and, on the real-time backends, each host's vSwitch uplink (its link to its switch).
 */
public final class LinkEgress {
    /**
     * The smallest link delay a real-time uplink emulates: a delayed packet waits for an event-loop
     * timer, which wakes tens of microseconds late on a busy machine (Linux's default timer slack is
     * 50 us), so a 1 us delay would add the wake-up's latency instead. Measured on a loaded 2-core
     * machine (load 15-19): a 100 Gbit/s, 1 us pair link with the delay applied moved 64 MiB WRITEs
     * at 0.02-0.07 Gbit/s, without it at the bare path's 0.07-0.15.
     */
    public static final long MIN_REAL_TIME_DELAY_NS = 50_000;

    /** The line a real-time host prints on exit with what its emulated link did, as {@link #countersLine}. */
    private static final Pattern COUNTERS_LINE =
            Pattern.compile("host link tx (\\d+) pkts, injected losses (\\d+), buffer drops (\\d+), ECN marked (\\d+)");

    private LinkEgress() {}

    /**
     * What a host's emulated link did, one line for the lab run that reads the host's output: {@code
     * counters} = [packets sent, injected losses (data + control), buffer drops, ECN marks].
     */
    public static String countersLine(long[] counters) {
        return "host link tx " + counters[0] + " pkts, injected losses " + counters[1] + ", buffer drops " + counters[2]
                + ", ECN marked " + counters[3];
    }

    /** Adds the counters of every {@link #countersLine} in {@code output} to {@code into} (four longs). */
    public static void addCounters(String output, long[] into) {
        Matcher m = COUNTERS_LINE.matcher(output);
        while (m.find()) {
            for (int i = 0; i < 4; i++) {
                into[i] += Long.parseLong(m.group(i + 1));
            }
        }
    }

    /**
     * Rate, buffer, RED/ECN and the data and control faults of {@code l}; its propagation delay is
     * the virtual fabric port's own (not part of the config).
     */
    public static EgressConfig egress(LinkSpec l) {
        EgressConfig c = EgressConfig.of(l.rateBps(), l.bufferBytes());
        if (l.ecn() != null) {
            long kMin = l.ecn().kMinBytes();
            long kMax = l.ecn().kMaxBytes() == null ? kMin : l.ecn().kMaxBytes();
            double pMax = l.ecn().pMax() == null ? 1.0 : l.ecn().pMax();
            c = c.withEcn(kMax == kMin ? RedEcnMarker.step(kMin) : new RedEcnMarker(kMin, kMax, pMax));
        }
        return c.withDataFaults(faults(l.faults())).withControlFaults(faults(l.controlFaults()));
    }

    /**
     * As {@link #egress}, for a real-time uplink: a port there has no propagation of its own, so
     * the link's delay becomes a fixed delay of every packet (data and control) on top of its
     * jitter, when it is at least {@link #MIN_REAL_TIME_DELAY_NS} ({@link #realTimeDelayNs}). INT
     * stamping stays off (real-time hosts run no HPCC telemetry).
     */
    public static EgressConfig realTime(LinkSpec l) {
        EgressConfig c = egress(l).withIntStamping(false);
        long delayNs = realTimeDelayNs(l);
        return c.withDataFaults(withDelay(c.dataFaults(), delayNs))
                .withControlFaults(withDelay(c.controlFaults(), delayNs));
    }

    /**
     * The seed of a real-time host's vSwitch: the lab's seed mixed with the ENI address
     * (SplitMix64's finaliser), so every host of a lab draws its own reproducible fault pattern.
     */
    public static long switchSeed(long labSeed, int eniIpv4) {
        long z = labSeed + 0x9E3779B97F4A7C15L * (1 + (eniIpv4 & 0xFFFF_FFFFL));
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * A link as a lab file gives it, as JSON ({@code ./vrdma host --host-link}), validated, its
     * omitted fields taken from {@link LinkSpec#DEFAULT}; a {@link LabException} otherwise.
     */
    public static LinkSpec parse(String json) {
        LinkSpec given;
        try {
            given = LabLoader.json().readValue(json, LinkSpec.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new LabException("hostLink", "not a link: " + e.getOriginalMessage());
        }
        LabValidator.validateLink("hostLink", given);
        return given.over(LinkSpec.DEFAULT);
    }

    /** The delay a real-time uplink applies for {@code l}: its delay, or 0 below the minimum. */
    public static long realTimeDelayNs(LinkSpec l) {
        long delayNs = l.delayNs() == null ? 0 : l.delayNs();
        return delayNs < MIN_REAL_TIME_DELAY_NS ? 0 : delayNs;
    }

    private static FaultConfig withDelay(FaultConfig f, long delayNs) {
        return delayNs == 0 ? f : f.withDelay(delayNs, f.jitterNs());
    }

    /** The seeded faults of {@code f}; none when it is null. */
    public static FaultConfig faults(LinkSpec.FaultSpec f) {
        if (f == null) {
            return FaultConfig.NONE;
        }
        FaultConfig c = FaultConfig.NONE;
        if (f.burstLoss() != null && f.burstLoss() > 0) {
            c = FaultConfig.burstLoss(f.burstLoss(), f.meanBurstPackets() == null ? 4 : f.meanBurstPackets());
        }
        if (f.loss() != null) {
            c = c.withLoss(f.loss());
        }
        if (f.duplicate() != null) {
            c = c.withDuplicates(f.duplicate());
        }
        if (f.reorder() != null && f.reorder() > 0) {
            c = c.withReordering(f.reorder(), f.reorderDelayNs());
        }
        if (f.jitterNs() != null) {
            c = c.withDelay(0, f.jitterNs());
        }
        return c;
    }
}
