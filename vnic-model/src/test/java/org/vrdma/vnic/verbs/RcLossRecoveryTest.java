package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * What a loss costs: a timeout resends what is missing, not the window; a hole is resent again
 * only when a packet sent after its resend arrived; a lost tail (the last packets of a WRITE, the
 * last responses of a READ) is probed after two round trips instead of waiting for the RTO.
 * Virtual time, 100 Gbit/s, 10 µs round trip, 4 KiB MTU, deterministic drops.
 */
class RcLossRecoveryTest {
    private static final int LEN = 256 * 1024;

    /** Drops the first transmission of each PSN among the frames {@code pick} selects. */
    private static Predicate<ByteBuf> dropOnce(final Predicate<ByteBuf> pick) {
        final Set<Integer> dropped = new HashSet<>();
        return frame -> pick.test(frame) && dropped.add(Fabric.psn(frame));
    }

    private static QueuePair[] connect(final Fabric f, final RecoveryMode mode) {
        return f.connectRc(mode, new QpCap(16, 16, 1, 1, 64), Mtu.MTU_4096);
    }

    /** A first WRITE teaches the RTO the round trip, so probes and the RTO floor apply. */
    private static void warmUp(final Fabric f, final QueuePair qp) {
        RecoveryOps.fill(f.a, LEN, 1);
        RecoveryOps.write(f, qp, LEN);
        RecoveryOps.awaitSuccess(f, 1_000_000L);
        f.scheduler.runFor(2_000_000);
    }

    @Test
    void aTimeoutAfterLostAcksResendsTheOldestAndAProbeNotTheWindow() {
        // Every ACK of a 64-packet WRITE is lost: the RTO expires with the whole window delivered.
        try (Fabric f =
                new Fabric(31, Fabric.fastLink(), TransportConfig.defaults().withWindowBytes(LEN))) {
            QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            byte[] data = RecoveryOps.fill(f.a, LEN, 5);
            long outageEndNs = f.scheduler.nowNs() + 60_000;
            f.dropBtoA(frame -> f.scheduler.nowNs() < outageEndNs);
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isEqualTo(1);
            // The oldest packet and the newest: the duplicate draws the ACK that covers all.
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(2);
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }

    /** The window of a congestion control that falls back to four packets on a timeout. */
    static final class ShrinkOnTimeout implements RateWindowSource {
        private long windowBytes = LEN;

        @Override
        public long rateBps() {
            return 100_000_000_000L;
        }

        @Override
        public long windowBytes() {
            return windowBytes;
        }

        @Override
        public void onTimeout(final long nowNs) {
            windowBytes = 4 * 4096;
        }
    }

    @Test
    void aGoBackNReplayKeepsToTheWindowCongestionControlSets() {
        TransportConfig config =
                TransportConfig.defaults().withRateWindowFactory((qpn, line, rtt, window) -> new ShrinkOnTimeout());
        try (Fabric f = new Fabric(32, Fabric.fastLink(), config)) {
            QueuePair[] qp = connect(f, RecoveryMode.GO_BACK_N);
            byte[] data = RecoveryOps.fill(f.a, LEN, 6);
            long outageEndNs = f.scheduler.nowNs() + 60_000;
            f.dropBtoA(frame -> f.scheduler.nowNs() < outageEndNs);
            // Frames A sends after the outage until B's first answer gets back to A.
            int[] sentBeforeAnswer = {0};
            boolean[] answered = {false};
            f.tapAtoB(frame -> {
                if (f.scheduler.nowNs() >= outageEndNs && !answered[0]) {
                    sentBeforeAnswer[0]++;
                }
            });
            f.dropBtoA(frame -> {
                if (f.scheduler.nowNs() < outageEndNs) {
                    return true;
                }
                answered[0] = true;
                return false;
            });
            RecoveryOps.write(f, qp[0], LEN);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isEqualTo(1);
            assertThat(sentBeforeAnswer[0]).isEqualTo(4);
            assertThat(RecoveryOps.contents(f.b, LEN)).isEqualTo(data);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aLostLastWritePacketIsProbedAfterTwoRoundTripsNotTheRto(RecoveryMode mode) {
        try (Fabric f = new Fabric(33, Fabric.fastLink(), TransportConfig.defaults())) {
            QueuePair[] qp = connect(f, mode);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.a, 64 * 1024, 8);
            f.dropAtoB(dropOnce(frame -> Fabric.opcode(frame) == Opcodes.RC_RDMA_WRITE_LAST));
            long start = f.scheduler.nowNs();
            RecoveryOps.write(f, qp[0], 64 * 1024);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().tailProbes).isEqualTo(1);
            // Sixteen packets (5 µs), two round trips of probe, one to deliver it: well under the 100 µs RTO.
            assertThat(f.scheduler.nowNs() - start).isLessThan(60_000);
            assertThat(RecoveryOps.contents(f.b, 64 * 1024)).isEqualTo(data);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aLostLastReadResponseIsAskedForAgainAfterTwoRoundTripsNotTheRto(RecoveryMode mode) {
        try (Fabric f = new Fabric(34, Fabric.fastLink(), TransportConfig.defaults())) {
            QueuePair[] qp = connect(f, mode);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.b, 64 * 1024, 9);
            // The READ goes out as several requests (a quarter window each): drop the last response
            // of the last one, after which nothing arrives that would show the gap.
            int[] responses = {0};
            f.dropBtoA(dropOnce(frame -> Opcodes.isReadResponse(Fabric.opcode(frame)) && ++responses[0] == 16));
            long start = f.scheduler.nowNs();
            RecoveryOps.read(f, qp[0], 64 * 1024);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().tailProbes).isEqualTo(1);
            assertThat(f.scheduler.nowNs() - start).isLessThan(60_000);
            assertThat(RecoveryOps.contents(f.a, 64 * 1024)).isEqualTo(data);
            f.settle();
        }
    }

    @Test
    void aHoleIsResentOnceWhileTheNaksOfOneBurstArrive() {
        // A 1 MiB WRITE in a 1 MiB window into a 100 Gbit/s link: a queue builds, so the NAKs for the
        // packets behind a hole keep arriving long after the hole's resend left.
        try (Fabric f =
                new Fabric(35, Fabric.fastLink(), TransportConfig.defaults().withWindowBytes(1 << 20))) {
            QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.a, 1 << 20, 10);
            int[] n = {0};
            f.dropAtoB(dropOnce(frame -> ++n[0] == 20 || n[0] == 90));
            RecoveryOps.write(f, qp[0], 1 << 20);
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(2);
            assertThat(RecoveryOps.contents(f.b, 1 << 20)).isEqualTo(data);
            f.settle();
        }
    }

    @ParameterizedTest
    @EnumSource(RecoveryMode.class)
    void aLostReadResponseIsAskedForAgainAloneNotWithTheReadsBehindIt(RecoveryMode mode) {
        try (Fabric f = new Fabric(36, Fabric.fastLink(), TransportConfig.defaults())) {
            QueuePair[] qp = connect(f, mode);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.b, 16 * 4096, 11);
            f.a.memory.buffer().setZero(0, 16 * 4096);
            int[] responses = {0};
            f.dropBtoA(dropOnce(frame -> Opcodes.isReadResponse(Fabric.opcode(frame)) && ++responses[0] == 2));
            // Sixteen one-packet READs in flight; the second one's response is lost.
            for (int i = 0; i < 16; i++) {
                SendWorkRequest wr = new SendWorkRequest();
                wr.wrId = i;
                wr.opcode = WrOpcode.RDMA_READ;
                wr.sendFlags = SendFlags.SIGNALED;
                wr.remoteAddr = Fabric.BASE + i * 4096L;
                wr.rkey = f.b.mr.rkey();
                wr.addSge(Fabric.BASE + i * 4096L, 4096, f.a.mr.lkey());
                qp[0].postSend(wr);
            }
            assertThat(f.runUntil(() -> f.a.cq.size() == 16, 10_000_000L)).isTrue();
            WorkCompletion[] wc = {new WorkCompletion()};
            for (int i = 0; i < 16; i++) {
                assertThat(f.a.cq.poll(wc)).isEqualTo(1);
                assertThat(wc[0].status).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc[0].wrId).isEqualTo(i);
            }
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(1);
            assertThat(RecoveryOps.contents(f.a, 16 * 4096)).isEqualTo(data);
            f.settle();
        }
    }

    @Test
    void aLostFirstPacketCostsItsMessageNotTheWindow() {
        // 64 KiB WRITEs (16 packets each) fill a 1 MiB window; the first packet of the third is lost,
        // so the responder cannot place the rest of that message (it names the target) and NAKs
        // without a SACK, while the messages after it are placed and SACKed.
        try (Fabric f =
                new Fabric(37, Fabric.fastLink(), TransportConfig.defaults().withWindowBytes(1 << 20))) {
            QueuePair[] qp = connect(f, RecoveryMode.SELECTIVE_REPEAT);
            warmUp(f, qp[0]);
            byte[] data = RecoveryOps.fill(f.a, 1 << 20, 12);
            int[] firsts = {0};
            f.dropAtoB(dropOnce(frame -> Fabric.opcode(frame) == Opcodes.RC_RDMA_WRITE_FIRST && ++firsts[0] == 3));
            for (int i = 0; i < 16; i++) {
                SendWorkRequest wr = new SendWorkRequest();
                wr.wrId = i;
                wr.opcode = WrOpcode.RDMA_WRITE;
                wr.sendFlags = i == 15 ? SendFlags.SIGNALED : 0;
                wr.remoteAddr = Fabric.BASE + i * 65536L;
                wr.rkey = f.b.mr.rkey();
                wr.addSge(Fabric.BASE + i * 65536L, 65536, f.a.mr.lkey());
                qp[0].postSend(wr);
            }
            RecoveryOps.awaitSuccess(f, 10_000_000L);
            assertThat(qp[0].counters().timeouts).isZero();
            assertThat(qp[0].counters().retransmittedPackets).isEqualTo(16);
            assertThat(RecoveryOps.contents(f.b, 1 << 20)).isEqualTo(data);
            f.settle();
        }
    }
}
