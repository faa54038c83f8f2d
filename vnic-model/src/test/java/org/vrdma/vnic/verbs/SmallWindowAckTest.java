package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.StaticRateWindow;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * A window smaller than the responder's ACK coalescing (congestion control may shrink it to one
 * packet, as HPCC does in a 32:1 incast) must not stall on the RTO: the packet that fills the
 * window asks for an ACK, so the responder answers it at once instead of waiting for more.
 */
class SmallWindowAckTest {
    private static final int LEN = 256 * 1024;

    private static QueuePair[] writeWithWindow(Fabric f, long windowBytes, RecoveryMode mode) {
        QueuePair[] qp = f.connectRc(mode, new QpCap(64, 64, 1, 1, 64), Mtu.MTU_4096);
        SendWorkRequest wr = new SendWorkRequest();
        for (int i = 0; i < 4; i++) {
            wr.reset();
            wr.wrId = i;
            wr.opcode = WrOpcode.RDMA_WRITE;
            wr.sendFlags = SendFlags.SIGNALED;
            wr.remoteAddr = Fabric.BASE;
            wr.rkey = f.b.mr.rkey();
            wr.addSge(Fabric.BASE, LEN / 4, f.a.mr.lkey());
            qp[0].postSend(wr);
        }
        return qp;
    }

    private static TransportConfig config(long windowBytes) {
        return TransportConfig.defaults()
                .withAckCoalescePackets(4)
                .withRto(100_000, 200_000)
                .withRateWindowFactory((qpNum, lineRateBps, baseRttNs, defaultWindowBytes) ->
                        new StaticRateWindow(RateWindowSource.UNLIMITED_RATE, windowBytes));
    }

    @Test
    void oneAndThreePacketWindowsFinishWithoutTimeouts() {
        for (long window : new long[] {1966, 3 * 4096}) {
            for (RecoveryMode mode : RecoveryMode.values()) {
                try (Fabric f = new Fabric(7, Fabric.fastLink(), config(window))) {
                    QueuePair[] qp = writeWithWindow(f, window, mode);
                    assertThat(f.runUntil(() -> f.a.cq.size() == 4, 1_000_000_000L))
                            .as("window %d, %s", window, mode)
                            .isTrue();
                    assertThat(qp[0].counters().timeouts)
                            .as("window %d, %s", window, mode)
                            .isZero();
                    assertThat(qp[0].counters().retransmittedPackets).isZero();
                    // 64 packets, a few microseconds each on the fast link: far below one RTO floor per packet.
                    assertThat(f.scheduler.nowNs()).isLessThan(64 * 100_000L / 4);
                }
            }
        }
    }
}
