package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.TopologyGenerator;

/**
 * A lab's host links on the real-time backends: each host's link to its switch becomes its
 * vSwitch uplink's emulation (rate, buffer, ECN, seeded faults, delay), so a lossy lab loses
 * packets there and its transport recovers them; links between switches are named in the notes.
 */
class HostLinkEmulationTest {
    private static final Pattern INJECTED = Pattern.compile("host link tx (\\d+) pkts, injected losses (\\d+)");

    /** Two hosts on a 10 Gbit/s, 100 us link, 2000 verified 4 KiB WRITEs, the given data faults. */
    private static Lab pair(String faults) {
        return LabLoader.parse("""
                {"name": "hostlink", "seed": 7, "topology": {"type": "pair", "hostLink": {"rateGbps": 10,
                   "delayNs": 100000, "bufferBytes": 4194304 %s}},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                                "sizeBytes": 4096, "iterations": 2000, "verify": true}]}
                """.formatted(faults), false);
    }

    private static LabResults run(Lab lab) {
        try (LabRun run = LabBackends.get("embedded").start(lab)) {
            return run.run(RunProgress.NONE);
        }
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void onePercentDataLossOnTheHostLinkIsInjectedAndRecoveredByteForByte() {
        LabResults lossy = run(pair(", \"faults\": {\"loss\": 0.01}"));
        LabResults.PerftestResult p = lossy.perftests().getFirst();
        assertThat(p.verifiedBytes()).isEqualTo(2000L * 4096);
        LabResults.Counters c = lossy.counters();
        // At least 2000 data packets cross the client's uplink: the seeded 1% draws lose some (~20),
        // every one of them retransmitted.
        assertThat(c.injectedLosses()).isBetween(4L, 80L);
        assertThat(c.retransmittedPackets()).isGreaterThanOrEqualTo(c.injectedLosses());
        assertThat(c.bufferDrops()).isZero();
        assertThat(notes(lossy)).noneMatch(n -> n.contains("not applied"));

        LabResults clean = run(pair(""));
        assertThat(clean.perftests().getFirst().verifiedBytes()).isEqualTo(2000L * 4096);
        assertThat(clean.counters().injectedLosses()).isZero();
        assertThat(clean.counters().bufferDrops()).isZero();
        assertThat(notes(clean)).noneMatch(n -> n.contains("not applied"));
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void flowAgentsEmulateTheHostLinkToo() {
        // Two 8 MiB flows (at least 4096 data packets through the senders' uplinks) under 1% loss.
        Lab lab = LabLoader.parse("""
                {"name": "flowlink", "seed": 3, "durationUs": 1000, "drainUs": 60000000, "topology": {"type": "pair", "hostLink": {"rateGbps": 5,
                   "delayNs": 0, "bufferBytes": 4194304, "faults": {"loss": 0.01}}},
                 "workloads": [{"type": "flows", "flows": [
                   {"src": "h0", "dst": "h1", "bytes": 8388608, "startUs": 0},
                   {"src": "h1", "dst": "h0", "bytes": 8388608, "startUs": 0}]}]}
                """, false);
        LabResults r = run(lab);
        assertThat(r.counters().flowsFinished()).isEqualTo(2);
        assertThat(r.counters().bytesDelivered()).isEqualTo(2L * 8388608);
        assertThat(r.counters().injectedLosses()).isPositive();
        assertThat(r.counters().retransmittedPackets())
                .isGreaterThanOrEqualTo(r.counters().injectedLosses());
        assertThat(notes(r)).noneMatch(n -> n.contains("not applied"));
    }

    @Test
    void linksBetweenSwitchesAreNamedAsNotAppliedAndHostLinksAreNot() {
        Lab leafSpine = LabLoader.parse("""
                {"name": "ls", "topology": {"type": "leafSpine", "leaves": 2, "spines": 2, "hostsPerLeaf": 1,
                   "hostLink": {"rateGbps": 25, "faults": {"loss": 0.01}},
                   "fabricLink": {"rateGbps": 100, "ecn": {"kMinBytes": 10000}}},
                 "workloads": [{"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1"}]}
                """, false);
        String note = RealTimeLabRun.notApplied(TopologyGenerator.resolve(leafSpine.withDefaults()));
        // The fabric link takes what it leaves out from the host link: the loss too.
        assertThat(note).contains("the 4 links between switches (rate, delay, buffer, ECN marking, faults)");
        assertThat(note).contains("each host's link to its switch is emulated on its vSwitch uplink");
        // The default 1 us host-link delay is below what a real-time timer honours.
        assertThat(note).contains("host link delays under 50 us (1000 ns here) were not applied");
        LabPlan plan = LabPlans.of(leafSpine);
        assertThat(plan.hosts())
                .allSatisfy(h -> assertThat(h.hostLink().rateGbps()).isEqualTo(25.0));
        assertThat(RealTimeLabRun.notApplied(TopologyGenerator.resolve(pair("").withDefaults())))
                .isNull();
    }

    /** The netns backend (root): the host processes in their namespaces get the host link. */
    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void theNetnsHostProcessesEmulateTheLabsHostLink() throws Exception {
        HostBackend backend = HostBackend.byName("netns");
        Lab lab = pair(", \"faults\": {\"loss\": 0.01}, \"controlFaults\": {\"loss\": 0.01}");
        RunningLab running = RunningLab.start(backend, LabPlans.of(lab));
        Transfer t;
        try {
            t = running.transfer(running.host("h0"), running.host("h1"), TransferOptions.verifiedWrite(2000L * 4096));
            assertThat(running.leftovers()).anyMatch(s -> s.startsWith("network namespace " + running.id()));
        } finally {
            running.close();
        }
        t.assertByteExact();
        for (String out : List.of(t.clientOutput(), t.serverOutput())) {
            assertThat(out)
                    .contains("host link on the uplink: 10.000 Gbit/s, buffer 4194304 B")
                    .contains("data loss 0.0100")
                    .contains("delay 100000 ns")
                    .contains("seed 7");
        }
        assertThat(t.serverOutput()).contains("control loss 0.0100");
        // Data losses on the client's uplink: ~1% of at least 2000 WRITE packets.
        assertThat(injected(t.clientOutput())).isPositive();
        assertThat(injected(t.serverOutput())).isNotNegative();
        assertThat(running.leftovers()).isEmpty();
    }

    private static List<String> notes(LabResults r) {
        return r.notes() == null ? List.of() : r.notes();
    }

    private static long injected(String output) {
        Matcher m = INJECTED.matcher(output);
        assertThat(m.find()).as(output).isTrue();
        return Long.parseLong(m.group(2));
    }
}
