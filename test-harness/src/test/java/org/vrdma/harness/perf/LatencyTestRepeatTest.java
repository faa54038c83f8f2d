package org.vrdma.harness.perf;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/** A latency run consumes the receives it posts, so runs can repeat on the same QPs without limit. */
class LatencyTestRepeatTest {
    @Test
    void manyShortRunsOnOneQueuePairPairLeaveNoReceivesBehind() {
        try (VirtualTwoHostLab lab = new VirtualTwoHostLab(
                11,
                LinkConfig.of(100_000_000_000L, 5_000),
                TransportConfig.defaults(),
                PooledByteBufAllocator.DEFAULT,
                1 << 16)) {
            // The QPs hold 32 receives: 16 left behind per run would overflow the receive queue
            // (ENOMEM on post) in the third run.
            PerftestSuite suite = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 32, 1_000_000_000L);
            for (int run = 0; run < 10; run++) {
                PerftestSuite.LatencyRow row = suite.latency(64, 3 + run);
                assertThat(row.iterations()).isEqualTo(3 + run);
                assertThat(row.p50Ns()).isPositive();
            }
            PerftestSuite.LatencyRow longer = suite.latency(64, 100);
            assertThat(longer.iterations()).isEqualTo(100);
        }
    }
}
