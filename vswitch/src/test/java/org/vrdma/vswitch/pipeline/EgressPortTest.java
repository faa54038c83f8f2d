package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.wire.Ipv4UdpHeaders;
import org.vrdma.wire.Opcode;
import org.vrdma.wire.RoceHeaders;

/** Egress port emulation in virtual time: serialisation, tail drop, RED/ECN statistics, faults, INT. */
class EgressPortTest {
    static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    static final Endpoint SRC = Endpoint.of(0x02_00_00_00_00_01L, "10.0.0.1");
    static final Endpoint DST = Endpoint.of(0x02_00_00_00_00_02L, "10.0.0.2");

    final VirtualTimeScheduler scheduler = new VirtualTimeScheduler(11);

    /** Departure times and frames (released) of a port's output. */
    static final class Departures implements FrameSink {
        final List<Long> timesNs = new ArrayList<>();
        final List<Integer> opcodes = new ArrayList<>();
        final List<Integer> psns = new ArrayList<>();
        int ceMarked;
        int badAfterMarking;
        FrameSink then;

        @Override
        public void onFrame(ByteBuf frame, long nowNs) {
            timesNs.add(nowNs);
            InnerFrame f = new InnerFrame();
            f.peek(frame, frame.readerIndex(), frame.writerIndex());
            opcodes.add(f.opcode);
            if (f.roce) {
                if (Frames.ecn(frame) == Ipv4UdpHeaders.CE) {
                    ceMarked++;
                    try {
                        Frames.decodeRoce(frame); // IPv4 checksum and ICRC must still hold
                    } catch (AssertionError e) {
                        badAfterMarking++;
                    }
                }
                psns.add(frame.getUnsignedMedium(f.ipOffset + 20 + 8 + 9));
            }
            frame.release();
            if (then != null) {
                then.onFrame(null, nowNs);
            }
        }
    }

    EgressPort port(EgressConfig config, FrameSink out) {
        return new EgressPort("test", scheduler, config, new SeededRandoms(5), -1, out);
    }

    @Test
    void aPausedPortFinishesTheFrameOnTheWireAndSendsTheRestAfterResume() {
        Departures out = new Departures();
        // 1500-byte frames at 12 Gbit/s: 1000 ns each.
        EgressPort p = port(EgressConfig.of(12_000_000_000L, 1 << 20), out);
        for (int i = 0; i < 3; i++) {
            assertThat(p.offer(Frames.tcp(ALLOC, SRC, DST, 80, 1500 - 54, i))).isTrue();
        }
        scheduler.runUntil(500);
        p.pause();
        assertThat(p.paused()).isTrue();
        scheduler.runUntil(10_000);
        assertThat(out.timesNs).containsExactly(1000L);
        assertThat(p.queuedPackets()).isEqualTo(2);
        p.resume();
        scheduler.runUntil(20_000);
        assertThat(out.timesNs).containsExactly(1000L, 11_000L, 12_000L);
        p.close();
    }

    @Test
    void serialisationIsExactAndDoesNotDriftAtRatesThatDoNotDivideANanosecond() {
        for (long rateBps : new long[] {10_000_000_000L, 7_000_000_000L}) {
            Departures out = new Departures();
            EgressPort p = port(EgressConfig.of(rateBps, 1 << 20), out);
            ByteBuf probe = Frames.tcp(ALLOC, SRC, DST, 80, 1500 - 54, 0);
            int bytes = probe.readableBytes();
            probe.release();
            for (int i = 0; i < 100; i++) {
                assertThat(p.offer(Frames.tcp(ALLOC, SRC, DST, 80, 1500 - 54, i)))
                        .isTrue();
            }
            scheduler.runUntilIdle(10_000);
            assertThat(out.timesNs).hasSize(100);
            long startNs = startOf(out, bytes, rateBps);
            for (int k = 1; k <= 100; k++) {
                // Back to back in picoseconds: departure k is the ceiling of k serialisation times.
                long ps = Math.floorDiv(k * bytes * 8L * 1_000_000_000_000L, rateBps);
                assertThat(out.timesNs.get(k - 1) - startNs).isEqualTo(Math.ceilDiv(ps, 1000));
            }
            assertThat(p.txBytes()).isEqualTo(100L * bytes);
        }
    }

    /** The time the first packet started: its departure minus its own serialisation, rounded as the port does. */
    private static long startOf(Departures out, int bytes, long rateBps) {
        long firstPs = Math.floorDiv(bytes * 8L * 1_000_000_000_000L, rateBps);
        return out.timesNs.get(0) - Math.ceilDiv(firstPs, 1000);
    }

    @Test
    void tailDropKeepsTheQueueWithinTheBuffer() {
        Departures out = new Departures();
        EgressPort p = port(EgressConfig.of(1_000_000_000L, 15_000), out);
        int accepted = 0;
        for (int i = 0; i < 20; i++) {
            accepted += p.offer(Frames.tcp(ALLOC, SRC, DST, 80, 1500 - 54, i)) ? 1 : 0;
        }
        assertThat(accepted).isEqualTo(10);
        assertThat(p.bufferDrops()).isEqualTo(10);
        assertThat(p.queueHighWaterBytes()).isEqualTo(15_000);
        scheduler.runUntilIdle(1000);
        assertThat(out.timesNs).hasSize(10);
        assertThat(p.queuedBytes()).isZero();
    }

    @Test
    void ecnMarkingFollowsKminKmaxPmax() {
        RedEcnMarker red = new RedEcnMarker(20_000, 60_000, 0.2);
        for (int level : new int[] {10_000, 40_000, 80_000}) {
            Departures out = new Departures();
            EgressPort p = port(EgressConfig.of(10_000_000_000L, 1 << 20).withEcn(red), out);
            // Hold the queue at `level`: prefill with non-ECT frames, then one ECT frame in per frame out.
            while (p.queuedBytes() < level) {
                p.offer(Frames.tcp(ALLOC, SRC, DST, 80, 1000, 0));
            }
            double[] expected = new double[2];
            int[] sent = {0};
            int probes = 1500;
            out.then = (ignored, now) -> {
                if (sent[0] < probes) {
                    double pr = red.markProbability(p.queuedBytes());
                    expected[0] += pr;
                    expected[1] += pr * (1 - pr);
                    p.offer(Frames.roce(ALLOC, SRC, DST, Opcode.RC_RDMA_WRITE_ONLY, 1000, sent[0]++));
                }
            };
            scheduler.runUntilIdle(1_000_000);
            double sigma = Math.sqrt(expected[1]);
            assertThat((double) out.ceMarked)
                    .as("level %d: marks vs expected %.1f", level, expected[0])
                    .isBetween(expected[0] - 4 * sigma - 1, expected[0] + 4 * sigma + 1);
            assertThat(p.ecnMarked()).isEqualTo(out.ceMarked);
            assertThat(out.badAfterMarking).isZero();
            if (level == 10_000) {
                assertThat(out.ceMarked).isZero();
            }
            if (level == 80_000) {
                assertThat(out.ceMarked).isEqualTo(probes);
            }
            if (level == 40_000) {
                assertThat(expected[0] / probes).isBetween(0.08, 0.12);
            }
        }
    }

    @Test
    void faultsApplySeparatelyToDataAndControlAndChangeAtRunTime() {
        Departures out = new Departures();
        FaultConfig data = FaultConfig.NONE.withLoss(0.1);
        FaultConfig control = FaultConfig.NONE.withLoss(0.02).withDuplicates(0.05);
        EgressPort p = port(EgressConfig.DEFAULT.withDataFaults(data).withControlFaults(control), out);
        int n = 4000;
        for (int i = 0; i < n; i++) {
            p.offer(Frames.roce(ALLOC, SRC, DST, Opcode.RC_SEND_ONLY, 64, i));
            p.offer(Frames.roce(ALLOC, SRC, DST, i % 2 == 0 ? Opcode.RC_ACKNOWLEDGE : Opcode.CNP, 0, i));
        }
        scheduler.runUntilIdle(100_000);
        long dataOut =
                out.opcodes.stream().filter(o -> o == Opcode.RC_SEND_ONLY).count();
        long controlOut = out.opcodes.size() - dataOut;
        assertThat(n - dataOut).isEqualTo(p.dataLost());
        within(p.dataLost(), n, 0.1);
        within(p.controlLost(), n, 0.02);
        within(p.controlFaults().duplicates(), n, 0.98 * 0.05);
        assertThat(controlOut).isEqualTo(n - p.controlLost() + p.controlFaults().duplicates());
        assertThat(p.dataFaults().duplicates()).isZero();
        assertThat(p.controlPackets()).isEqualTo(n);

        p.config(p.config().withDataFaults(FaultConfig.NONE));
        long before = p.dataLost();
        for (int i = 0; i < 1000; i++) {
            p.offer(Frames.roce(ALLOC, SRC, DST, Opcode.RC_SEND_ONLY, 64, i));
        }
        scheduler.runUntilIdle(10_000);
        assertThat(p.dataLost()).isEqualTo(before);
    }

    @Test
    void burstLossMatchesGilbertElliottAndDelayReorders() {
        Departures out = new Departures();
        // Stationary bad-state share p/(p+r) = 0.01/0.11; mean burst 1/r = 10 frames.
        FaultConfig bursts = new FaultConfig(0, 0.01, 0.1, 1.0, 0, 0, 0, 0, 0);
        EgressPort p = port(EgressConfig.DEFAULT.withDataFaults(bursts), out);
        int n = 12_000;
        for (int i = 0; i < n; i++) {
            p.offer(Frames.roce(ALLOC, SRC, DST, Opcode.RC_SEND_ONLY, 16, i));
        }
        scheduler.runUntilIdle(100_000);
        double lossRate = p.dataLost() / (double) n;
        assertThat(lossRate).isBetween(0.0909 * 0.7, 0.0909 * 1.3);
        // Mean loss run from the PSN gaps.
        int runs = 0;
        for (int i = 1; i < out.psns.size(); i++) {
            if (out.psns.get(i) != out.psns.get(i - 1) + 1) {
                runs++;
            }
        }
        assertThat(p.dataLost() / (double) runs).isBetween(7.0, 13.0);

        Departures late = new Departures();
        EgressPort q = port(EgressConfig.DEFAULT.withControlFaults(FaultConfig.NONE.withReordering(0.1, 5_000)), late);
        for (int i = 0; i < 1000; i++) {
            long at = i * 1_000L;
            int psn = i;
            scheduler.scheduleAt(at, (now, id) -> q.offer(Frames.roce(ALLOC, SRC, DST, Opcode.RC_ACKNOWLEDGE, 0, psn)));
        }
        scheduler.runUntilIdle(100_000);
        assertThat(late.psns).hasSize(1000);
        within(q.controlFaults().reordered(), 1000, 0.1);
        int inversions = 0;
        for (int i = 1; i < late.psns.size(); i++) {
            inversions += late.psns.get(i) < late.psns.get(i - 1) ? 1 : 0;
        }
        assertThat(inversions).isPositive();
    }

    @Test
    void intRecordsAreStampedByTheUplinkAndDeliveredToTheReceiver() {
        Lab lab = new Lab(3);
        long hostA = UnderlayAddress.parse("10.1.0.1:6081");
        long hostB = UnderlayAddress.parse("10.1.0.2:6081");
        VSwitch a = lab.add(
                VSwitchConfig.of("a", hostA).withIntMaxHops(2).withUplink(EgressConfig.of(25_000_000_000L, 1 << 20)));
        VSwitch b = lab.add(VSwitchConfig.of("b", hostB));
        Collector atB = new Collector();
        a.addEni(EniConfig.of(1, SRC.mac(), "10.0.0.1", 9), new Collector());
        b.addEni(EniConfig.of(1, DST.mac(), "10.0.0.2", 9), atB);
        a.addRemoteRoute(9, "10.0.0.2", hostB);
        b.addRemoteRoute(9, "10.0.0.1", hostA);
        for (int i = 0; i < 10; i++) {
            a.onEniFrame(1, Frames.roce(ALLOC, SRC, DST, Opcode.RC_RDMA_WRITE_ONLY, 1000, i));
        }
        lab.scheduler.runUntilIdle(10_000);
        assertThat(atB.telemetry).hasSize(10);
        long lastTx = 0;
        for (int i = 0; i < 10; i++) {
            var t = atB.telemetry.get(i);
            assertThat(t.hopCount()).isEqualTo(1);
            assertThat(t.linkRateBps(0)).isEqualTo(25_000_000_000L);
            assertThat(t.txBytes(0)).isGreaterThan(lastTx);
            lastTx = t.txBytes(0);
            assertThat(t.queueBytes(0)).isEqualTo((9 - i) * (long) (lastTx / (i + 1)));
        }
        assertThat(a.uplink().intStamped()).isEqualTo(10);
        // What B delivers is the inner frame exactly: still valid RoCE.
        RoceHeaders h = Frames.decodeRoce(io.netty.buffer.Unpooled.wrappedBuffer(atB.frames.get(0)));
        assertThat(h.opcode).isEqualTo(Opcode.RC_RDMA_WRITE_ONLY);
        lab.close();
    }

    private static void within(long observed, int n, double p) {
        double sigma = Math.sqrt(n * p * (1 - p));
        assertThat((double) observed)
                .as("observed %d of %d, expected p=%.4f", observed, n, p)
                .isBetween(n * p - 4 * sigma, n * p + 4 * sigma);
    }
}
