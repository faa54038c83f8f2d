package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;

/**
 * Large RDMA READs in virtual time, seeded: a READ goes out as requests of at most a quarter of the TX
 * window (responses are not acknowledged, so nothing else bounds how many arrive at once), and a
 * lost response is asked for again from the first missing PSN with the remote address and length
 * advanced, never the whole READ.
 */
class RcLargeReadTest {
    private static final int READ_BYTES = 4 << 20;
    private static final long REMOTE = Fabric.BASE + (4L << 20);
    private static final int PMTU = 4096;

    static Stream<Arguments> cases() {
        final List<Arguments> cases = new ArrayList<>();
        for (final RecoveryMode mode : RecoveryMode.values()) {
            for (final double loss : new double[] {0, 0.001, 0.01, 0.05}) {
                cases.add(Arguments.of(mode, loss, false));
            }
            cases.add(Arguments.of(mode, 0.0, true));
            cases.add(Arguments.of(mode, 0.01, true));
        }
        return cases.stream();
    }

    /** What A asked for: every READ request's PSN, remote address and length. */
    private record Request(int psn, long va, int length) {}

    @ParameterizedTest(name = "{0} loss {1} slow link {2}")
    @MethodSource("cases")
    void largeReadIsWindowedAndRecoversFromTheFirstMissingPsn(
            final RecoveryMode mode, final double loss, final boolean slowLink) {
        final long seed = 0x5EAD_0000L + mode.ordinal() * 31L + (long) (loss * 1e4) + (slowLink ? 7 : 0);
        // A slow link: a window of responses takes longer than the RTO floor, so timeouts fire while
        // responses are still on their way (a loaded real-time host does the same), and repeated
        // requests overlap the responses of the first ones.
        final TransportConfig config =
                slowLink ? TransportConfig.defaults().withRto(100_000, 100_000) : TransportConfig.defaults();
        final org.vrdma.runtime.LinkConfig link = slowLink
                ? org.vrdma.runtime.LinkConfig.of(1_000_000_000L, 300_000).withQueueCapacityBytes(4 << 20)
                : Fabric.fastLink();
        try (Fabric f = new Fabric(seed, link, config)) {
            f.faults(loss == 0 ? FaultConfig.NONE : FaultConfig.randomLoss(loss));
            final QueuePair[] qps = f.connectRc(mode, new QpCap(16, 16, 1, 1, 0), Mtu.MTU_4096);
            final List<Request> requests = new ArrayList<>();
            final RocePacketCodec codec = new RocePacketCodec();
            final TransportPacket seen = new TransportPacket();
            f.tapAtoB(frame -> {
                if (codec.decode(frame.duplicate(), seen) && seen.opcode == Opcodes.RC_RDMA_READ_REQUEST) {
                    requests.add(new Request(seen.psn, seen.rethVa, seen.rethLength));
                }
            });
            final byte[] source = new byte[READ_BYTES];
            new SplittableRandom(seed).nextBytes(source);
            f.b.memory.write(4L << 20, source, 0, READ_BYTES);

            final SendWorkRequest wr = new SendWorkRequest();
            wr.wrId = 42;
            wr.opcode = WrOpcode.RDMA_READ;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.remoteAddr = REMOTE;
            wr.rkey = f.b.mr.rkey();
            wr.addSge(Fabric.BASE, READ_BYTES, f.a.mr.lkey());
            qps[0].postSend(wr);

            final WorkCompletion[] wc = {new WorkCompletion()};
            final boolean done = f.runUntil(() -> f.a.cq.poll(wc) == 1, 20_000_000_000L);
            assertThat(done).as("READ completed").isTrue();
            assertThat(wc[0].status).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc[0].wrId).isEqualTo(42);
            assertThat(wc[0].byteLen).isEqualTo(READ_BYTES);
            final byte[] got = new byte[READ_BYTES];
            f.a.memory.read(0, got, 0, READ_BYTES);
            assertThat(got).as("READ data").isEqualTo(source);

            final int packets = READ_BYTES / PMTU;
            final int windowPackets = (int) (config.effectiveWindowBytes() / PMTU);
            final int firstPsn = 0x100;
            for (final Request r : requests) {
                final int index = (r.psn() - firstPsn) & 0xFFFFFF;
                // Every request, first or repeated, names the part of the buffer its PSN stands for.
                assertThat(r.va()).as("VA of request at PSN index %d", index).isEqualTo(REMOTE + (long) index * PMTU);
                assertThat(r.length()).as("length at %d", index).isPositive();
                assertThat(index * (long) PMTU + r.length()).isLessThanOrEqualTo(READ_BYTES);
                // No request asks for more responses than the window holds.
                assertThat((r.length() + PMTU - 1) / PMTU)
                        .as("packets asked for at %d", index)
                        .isLessThanOrEqualTo(windowPackets);
            }
            final TransportCounters responder = qps[1].counters();
            final long responses = responder.txPackets - responder.txAcks;
            if (loss == 0 && !slowLink) {
                assertThat(responses).isEqualTo(packets);
                assertThat(qps[0].counters().retransmittedPackets).isZero();
            } else {
                // Recovery asks again only for the missing part (at most a window beyond it).
                // Timeouts while responses are on their way (slow link) each cost a window too.
                final int extra = slowLink ? 8 : 4;
                assertThat(responses).isLessThan(packets + (long) (packets * loss * 3 + extra) * windowPackets);
            }
            assertThat(qps[0].state()).isEqualTo(QpState.RTS);
            assertThat(qps[1].state()).isEqualTo(QpState.RTS);
            System.out.printf(
                    "%s loss %.3f slow %s: %d requests, %d responses for %d packets, %d timeouts, %d us%n",
                    mode,
                    loss,
                    slowLink,
                    requests.size(),
                    responses,
                    packets,
                    qps[0].counters().timeouts,
                    f.scheduler.nowNs() / 1000);
        }
    }
}
