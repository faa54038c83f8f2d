package org.vrdma.harness.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.WrOpcode;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.udp.NettyUnderlay;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * RDMA WRITEs on the real-time two-host lab whose data packets leave with their payload gathered
 * by the underlay's {@code sendmmsg} straight from the memory region (never copied into the frame):
 * the data arrives intact and no packet fails its ICRC at the receiver, also when the uplink holds
 * frames back (their payload is then copied in before they leave) and when it duplicates them (the
 * payload is then copied into the frame from the start).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PayloadFromMemoryRegionTest {
    private static final int SIZE_BYTES = 65_536;
    private static final int WRITES = 300;

    @Test
    void writesLeaveFromTheMemoryRegionIntact() throws Exception {
        assumeEpoll();
        try (RealTimeTwoHostLab lab = new RealTimeTwoHostLab(RealTimeProfile.transport(), 1 << 20)) {
            PerftestSuite suite = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 16, 60_000_000_000L);
            PerftestSuite.BandwidthRow row = suite.bandwidth(WrOpcode.RDMA_WRITE, SIZE_BYTES, WRITES);
            assertThat(row.intact()).as("data intact").isTrue();
            assertThat(row.iterations()).isEqualTo(WRITES);
            // 16 packets of 4 KiB per WRITE, every one with its payload sent from the region.
            assertThat(count(lab.hostA(), NettyUnderlay::deferredPayloads))
                    .as("datagrams sent with the payload from memory")
                    .isGreaterThanOrEqualTo(WRITES * 16L);
            assertThat(count(lab.hostA(), NettyUnderlay::sendCalls)).isPositive();
            assertNothingDropped(lab);
        }
    }

    @Test
    void framesTheUplinkHoldsBackGetTheirPayloadBeforeTheyLeave() throws Exception {
        assumeEpoll();
        try (RealTimeTwoHostLab lab = new RealTimeTwoHostLab(RealTimeProfile.transport(), 1 << 20)) {
            // Reordering holds frames back: their arena regions are abandoned while later frames are
            // built, so their payload is copied in from the memory region then.
            lab.faults(FaultConfig.NONE.withReordering(0.05, 200_000), FaultConfig.NONE);
            PerftestSuite suite = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 16, 60_000_000_000L);
            PerftestSuite.BandwidthRow row = suite.bandwidth(WrOpcode.RDMA_WRITE, SIZE_BYTES, WRITES);
            assertThat(row.intact()).as("data intact").isTrue();
            assertThat(count(lab.hostA(), NettyUnderlay::deferredPayloads)).isPositive();
            assertThat(count(lab.hostA(), NettyUnderlay::abandonedReservations))
                    .as("frames held back by the uplink")
                    .isPositive();
            assertNothingDropped(lab);
        }
    }

    @Test
    void anUplinkThatDuplicatesFramesGetsThemWithTheirPayload() throws Exception {
        assumeEpoll();
        try (RealTimeTwoHostLab lab = new RealTimeTwoHostLab(RealTimeProfile.transport(), 1 << 20)) {
            // A duplicate is a copy of the frame: the payload must be in it, so nothing is deferred.
            lab.faults(FaultConfig.NONE.withDuplicates(0.05), FaultConfig.NONE);
            PerftestSuite suite = new PerftestSuite(lab, RecoveryMode.SELECTIVE_REPEAT, 16, 60_000_000_000L);
            PerftestSuite.BandwidthRow row = suite.bandwidth(WrOpcode.RDMA_WRITE, SIZE_BYTES, WRITES / 3);
            assertThat(row.intact()).as("data intact").isTrue();
            assertThat(count(lab.hostA(), NettyUnderlay::deferredPayloads)).isZero();
            TransportCounters c = lab.transportCounters();
            assertThat(c.duplicateRequests)
                    .as("duplicates arrived and were recognised")
                    .isPositive();
            assertNothingDropped(lab);
        }
    }

    /** No packet failed to decode (a payload missing from its frame fails the ICRC). */
    private static void assertNothingDropped(RealTimeTwoHostLab lab) {
        TransportCounters c = lab.transportCounters();
        assertThat(c.droppedPackets)
                .as("packets dropped by the vNICs (ICRC, malformed)")
                .isZero();
    }

    private static long count(VSwitchHost host, java.util.function.ToLongFunction<NettyUnderlay> counter) {
        return host.call(vs -> counter.applyAsLong(host.underlay()));
    }

    private static void assumeEpoll() {
        if (NettyRuntime.best() != NettyRuntime.EPOLL) {
            throw new AssertionError("the real-time data path needs the epoll transport (Linux x86_64)");
        }
    }
}
