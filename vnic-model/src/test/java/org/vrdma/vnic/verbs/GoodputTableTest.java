package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Goodput of one RC QP streaming 64 KiB RDMA WRITEs over a 100 Gbit/s link with 10 µs RTT, 4096-byte
 * MTU and a window of two BDPs, against random loss, in virtual time. Writes the table to {@code
 * target/goodput-table.md} (the README's table comes from there).
 */
class GoodputTableTest {
    private static final long LINE_RATE_BPS = 100_000_000_000L;
    private static final long WARMUP_NS = 200_000;
    private static final long MEASURE_NS = 3_000_000;
    private static final int MESSAGE_BYTES = 64 * 1024;
    private static final double[] LOSS = {0, 0.001, 0.01, 0.05, 0.10};

    /** Goodput as a fraction of line rate. */
    static double goodput(final RecoveryMode mode, final double loss, final long windowBytes, final long seed) {
        return run(mode, loss, windowBytes, seed).goodput();
    }

    /** Goodput as a fraction of line rate and the packets the responder got twice. */
    record Run(double goodput, long duplicates) {}

    static Run run(final RecoveryMode mode, final double loss, final long windowBytes, final long seed) {
        final TransportConfig cfg = TransportConfig.defaults().withWindowBytes(windowBytes);
        // Leak tracking records a stack trace per buffer access, which would dominate the run time;
        // leaks are what the functional tests check, with the tracker on.
        final io.netty.buffer.ByteBufAllocator untracked = new io.netty.buffer.UnpooledByteBufAllocator(true, true);
        try (Fabric f = new Fabric(seed, Fabric.fastLink(), cfg, DeviceAttributes.defaults(), untracked)) {
            f.faults(FaultConfig.randomLoss(loss));
            final QueuePair[] qp = f.connectRc(mode, new QpCap(256, 16, 1, 1, 0), Mtu.MTU_4096);
            final QueuePair qa = qp[0];
            final SendWorkRequest wr = new SendWorkRequest();
            final WorkCompletion[] wcs = new WorkCompletion[64];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            long posted = 0;
            long completed = 0;
            long measuredBytes = 0;
            final long begin = f.scheduler.nowNs() + WARMUP_NS;
            final long end = begin + MEASURE_NS;
            while (f.scheduler.nowNs() < end) {
                while (posted - completed < 128) {
                    wr.reset();
                    wr.wrId = posted;
                    wr.opcode = WrOpcode.RDMA_WRITE;
                    wr.sendFlags = SendFlags.SIGNALED;
                    final long off = (posted % 32) * MESSAGE_BYTES;
                    wr.remoteAddr = Fabric.BASE + off;
                    wr.rkey = f.b.mr.rkey();
                    wr.addSge(Fabric.BASE + off, MESSAGE_BYTES, f.a.mr.lkey());
                    qa.postSend(wr);
                    posted++;
                }
                if (!f.scheduler.runUntil(() -> f.a.cq.size() > 0, end)) {
                    if (f.scheduler.pendingTimers() == 0) {
                        throw new AssertionError("transport stalled: " + qa + " " + qa.counters());
                    }
                    f.scheduler.runUntil(end);
                }
                int n;
                while ((n = f.a.cq.poll(wcs)) > 0) {
                    for (int i = 0; i < n; i++) {
                        assertThat(wcs[i].status).isEqualTo(WcStatus.SUCCESS);
                    }
                    completed += n;
                    final long now = f.scheduler.nowNs();
                    if (now >= begin && now <= end) {
                        measuredBytes += (long) n * MESSAGE_BYTES;
                    }
                }
            }
            return new Run(measuredBytes * 8e9 / MEASURE_NS / LINE_RATE_BPS, qp[1].counters().duplicateRequests);
        }
    }

    @Test
    void selectiveRepeatHoldsNinetyPercentAtOnePercentLoss() {
        assertThat(goodput(RecoveryMode.SELECTIVE_REPEAT, 0.01, 250_000, 7)).isGreaterThanOrEqualTo(0.90);
    }

    @Test
    void selectiveRepeatResendsLittleThatArrivedAtTenPercentLoss() {
        // An answer to a packet's first copy, arriving soon after its resend, was taken for the
        // resend's and marked everything sent in between lost: 44.9 % and 3,608 packets the
        // responder already had; 67.6 % and 1,232 now (the rest are packets whose SACK was lost).
        final Run run = run(RecoveryMode.SELECTIVE_REPEAT, 0.10, 250_000, 11);
        assertThat(run.goodput()).isGreaterThanOrEqualTo(0.60);
        assertThat(run.duplicates()).isLessThan(1_500);
    }

    @Test
    void goBackNKeepsItsRtoAtTenPercentLoss() {
        // No first transmission is acknowledged before a NAK replays it, so no RTT sample came and
        // every timeout doubled the RTO for good (2.1 %); a NAK's replay now times the round trip.
        assertThat(goodput(RecoveryMode.GO_BACK_N, 0.10, 250_000, 11)).isGreaterThanOrEqualTo(0.05);
    }

    @Test
    void writeGoodputTable() throws IOException {
        final StringBuilder t = new StringBuilder();
        t.append("| random loss | go-back-N | selective repeat |\n|---:|---:|---:|\n");
        double previousGbn = 1;
        double previousSr = 1;
        for (final double loss : LOSS) {
            final double gbn = goodput(RecoveryMode.GO_BACK_N, loss, 250_000, 11);
            final double sr = goodput(RecoveryMode.SELECTIVE_REPEAT, loss, 250_000, 11);
            t.append(String.format(Locale.ROOT, "| %.1f %% | %.1f %% | %.1f %% |%n", loss * 100, gbn * 100, sr * 100));
            // What the table shows: selective repeat never below go-back-N, both falling as loss grows.
            assertThat(sr).as("selective repeat at %s loss", loss).isGreaterThanOrEqualTo(gbn);
            assertThat(gbn).as("go-back-N at %s loss", loss).isPositive().isLessThanOrEqualTo(previousGbn);
            assertThat(sr).as("selective repeat at %s loss", loss).isLessThanOrEqualTo(previousSr);
            if (loss == 0) {
                // Lossless, both fill the link but for the headers (1.4 %).
                assertThat(gbn).isGreaterThan(0.95);
            }
            previousGbn = gbn;
            previousSr = sr;
        }
        final Path out = Path.of("target", "goodput-table.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, t.toString());
        System.out.println(t);
    }
}
