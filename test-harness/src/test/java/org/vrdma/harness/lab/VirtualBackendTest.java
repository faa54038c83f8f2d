package org.vrdma.harness.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The virtual backend runs labs with the real transport and vSwitch in virtual time. */
@ExtendWith(SampledLeakDetection.class)
class VirtualBackendTest {
    static final String TWO_HOSTS = """
            {
              "name": "two-hosts",
              "seed": 7,
              "durationUs": 3000,
              "topology": {"type": "pair", "hostLink": {"rateGbps": 100, "delayNs": 1000}},
              "workloads": [
                {"type": "perftest", "test": "writeBw", "client": "h0", "server": "h1",
                 "sizeBytes": 65536, "iterations": 200, "verify": true},
                {"type": "perftest", "test": "readBw", "client": "h0", "server": "h1",
                 "sizeBytes": 16384, "iterations": 100, "verify": true, "startUs": 1500},
                {"type": "perftest", "test": "sendLat", "client": "h0", "server": "h1",
                 "sizeBytes": 64, "iterations": 100, "verify": true, "startUs": 2500}
              ]
            }
            """;

    @Test
    void twoHostLabMovesRdmaByteForByte() {
        Lab lab = LabLoader.parse(TWO_HOSTS, false);
        try (LabRun run = LabBackends.get("virtual").start(lab)) {
            LabResults r = run.run(RunProgress.NONE);
            List<LabResults.PerftestResult> p = r.perftests();
            assertThat(p).hasSize(3);
            LabResults.PerftestResult write = p.get(0);
            System.out.println(p);
            assertThat(write.mismatchedBytes()).isZero();
            // Messages cycle through a 4 MiB window of the buffers: all of it is checked.
            assertThat(write.verifiedBytes()).isEqualTo(4L << 20);
            // One 100 Gbit/s link with Geneve and RoCE headers: most of the line rate, never more.
            assertThat(write.gbps()).isBetween(80.0, 100.0);
            LabResults.PerftestResult read = p.get(1);
            assertThat(read.mismatchedBytes()).isZero();
            assertThat(read.verifiedBytes()).isEqualTo(100L * 16384);
            LabResults.PerftestResult lat = p.get(2);
            assertThat(lat.iterations()).isEqualTo(100);
            assertThat(lat.mismatchedBytes()).isZero();
            assertThat(lat.verifiedBytes()).isEqualTo(100L * 64);
            // Half a round trip: at least the 1 us wire, a few us at most on an empty link.
            assertThat(lat.latencyP50Us()).isBetween(1.0, 5.0);
        }
    }
}
