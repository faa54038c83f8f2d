package org.vrdma.harness.lab.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LinkSpec;

/** Ideal FCT, slowdown and the size buckets, checked against hand-computed values. */
class FctMathTest {
    static final LinkSpec HOST = new LinkSpec(100.0, 1000L, null, null, null, null);
    static final LinkSpec FABRIC = new LinkSpec(400.0, 1000L, null, null, null, null);

    @Test
    void idealFctOfOnePacketOverOneLink() {
        // 1000 B + 100 B overhead = 1100 B = 88 ns at 100 Gbit/s, 1000 ns wire; ACK 80 B = 6.4 ns + 1000 ns.
        assertThat(FctMath.idealFctNs(1000, 4096, 100, 80, List.of(HOST))).isEqualTo(1000 + 88 + 1000 + 6);
    }

    @Test
    void idealFctPipelinesAtTheBottleneck() {
        // 10 packets of 4096 B + 100 B over host(100G) -> fabric(400G) -> host(100G).
        long bytes = 10 * 4096;
        double pkt = 4196;
        double first = pkt * 8 / 100 + pkt * 8 / 400 + pkt * 8 / 100 + 3 * 1000;
        double rest = 9 * pkt * 8 / 100;
        double ack = 3 * 1000 + 80 * 8 / 100.0 + 80 * 8 / 400.0 + 80 * 8 / 100.0;
        assertThat(FctMath.idealFctNs(bytes, 4096, 100, 80, List.of(HOST, FABRIC, HOST)))
                .isEqualTo(Math.round(first + rest + ack));
    }

    @Test
    void slowdownAndBuckets() {
        assertThat(FctMath.slowdown(3000, 1000)).isEqualTo(3.0);
        assertThat(FctMath.slowdown(-1, 1000)).isEqualTo(-1.0);
        List<LabResults.FlowResult> flows = new java.util.ArrayList<>();
        // 100 small flows with slowdown 1..100, 4 large with 2, one unfinished (excluded).
        for (int i = 1; i <= 100; i++) {
            flows.add(flow(5_000, 1000L * i, 1000));
        }
        for (int i = 0; i < 4; i++) {
            flows.add(flow(2_000_000, 2000, 1000));
        }
        flows.add(flow(5_000, -1, 1000));
        List<LabResults.SizeBucket> b = Percentiles.buckets(flows);
        assertThat(b).hasSize(2);
        assertThat(b.get(0).maxBytes()).isEqualTo(10_000);
        assertThat(b.get(0).flows()).isEqualTo(100);
        assertThat(b.get(0).p50()).isEqualTo(50.0);
        assertThat(b.get(0).p95()).isEqualTo(95.0);
        assertThat(b.get(0).p99()).isEqualTo(99.0);
        assertThat(b.get(0).meanFctUs()).isEqualTo(50.5);
        assertThat(b.get(1).minBytes()).isEqualTo(1_000_000);
        assertThat(b.get(1).p99()).isEqualTo(2.0);
    }

    private static LabResults.FlowResult flow(long bytes, long fct, long ideal) {
        return new LabResults.FlowResult(
                0, "w0", "h0/eni0", "h1/eni0", bytes, 0, fct, fct, ideal, FctMath.slowdown(fct, ideal), "none");
    }
}
