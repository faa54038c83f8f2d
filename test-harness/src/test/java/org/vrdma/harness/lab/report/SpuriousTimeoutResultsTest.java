package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.SampledLeakDetection;

/**
 * Spurious retransmission timeouts reach the lab results: a SEND ping-pong (one packet in flight,
 * so a timeout resends exactly one) whose packets are delayed beyond the RTO has timeouts found
 * needless, while one whose data is really lost has timeouts and none of them spurious.
 */
@ExtendWith(SampledLeakDetection.class)
class SpuriousTimeoutResultsTest {
    /** Data packets delayed by up to 1 ms each, against a 100 us RTO floor and a 10 us round trip. */
    private static final String LATE_DATA = "\"faults\": {\"jitterNs\": 1000000}";

    private static Lab pingPong(String name, String hostLinkFaults) {
        return LabLoader.parse("""
                {
                  "name": "%s",
                  "seed": 5,
                  "durationUs": 100,
                  "drainUs": 500000,
                  "topology": {"type": "pair", "hostLink": {"rateGbps": 100, "delayNs": 1000, %s}},
                  "transport": {"minRtoUs": 100},
                  "workloads": [
                    {"type": "perftest", "test": "sendLat", "client": "h0", "server": "h1",
                     "sizeBytes": 64, "iterations": 200, "verify": true}
                  ]
                }
                """.formatted(name, hostLinkFaults), false);
    }

    private static LabResults run(Lab lab) {
        try (LabRun run = LabBackends.get("virtual").start(lab)) {
            return run.run(RunProgress.NONE);
        }
    }

    @Test
    void delayedPacketsGiveSpuriousTimeoutsInEveryOutput(@TempDir Path dir) throws Exception {
        // Delayed, never lost: a resend finds its packet there, and its duplicate ACK says so.
        LabResults r = run(pingPong("late-data", LATE_DATA));
        LabResults.Counters c = r.counters();
        assertThat(r.perftests().getFirst().mismatchedBytes()).isZero();
        assertThat(c.injectedLosses() + c.bufferDrops()).isZero();
        assertThat(c.timeouts()).isPositive();
        // Nothing was lost, so every resend found its packet there; a back-off's second expiry
        // before the late ACK resends the same packet again and is found once.
        assertThat(c.spuriousTimeouts()).isPositive().isLessThanOrEqualTo(c.timeouts());
        assertThat(c.spuriousTimeouts()).isGreaterThanOrEqualTo(c.timeouts() / 2);

        String summary = LabRunner.summary(r, 1.0);
        assertThat(summary).contains(c.timeouts() + " timeouts (" + c.spuriousTimeouts() + " spurious)");
        assertThat(new HtmlReport("t").counters(c, true).render())
                .contains("<td>of which spurious (the resent packet had arrived)</td><td>" + c.spuriousTimeouts()
                        + "</td>");
        ResultsWriter.write(r, dir);
        assertThat(Files.readString(dir.resolve("counters.csv")))
                .startsWith("counter,value\nflows_started,")
                .contains("\ntimeouts," + c.timeouts() + "\nspurious_timeouts," + c.spuriousTimeouts() + "\n");
        String json = Files.readString(dir.resolve("results.json"));
        assertThat(json)
                .contains("\"timeouts\" : " + c.timeouts() + ",\n    \"spuriousTimeouts\" : " + c.spuriousTimeouts()
                        + ",");
        assertThat(LabLoader.json().readValue(json, LabResults.class).counters())
                .isEqualTo(c);
        // Virtual time: the same seed gives the same count, byte for byte.
        assertThat(ResultsWriter.json(run(pingPong("late-data", LATE_DATA)))).isEqualTo(ResultsWriter.json(r));
    }

    @Test
    void realLossGivesTimeoutsNoneSpurious() {
        LabResults r = run(pingPong("lossy", "\"faults\": {\"loss\": 0.05}"));
        LabResults.Counters c = r.counters();
        assertThat(r.perftests().getFirst().mismatchedBytes()).isZero();
        assertThat(c.injectedLosses()).isPositive();
        assertThat(c.timeouts()).isPositive();
        assertThat(c.spuriousTimeouts()).isZero();
        assertThat(LabRunner.summary(r, 1.0)).contains(c.timeouts() + " timeouts (0 spurious)");
    }
}
