package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.vrdma.cc.FlowContext;

class DctcpTest {
    private static final int MTU = 1_000;
    private static final FlowContext FLOW = new FlowContext(100_000_000_000L, 10_000, MTU, 100_000, 1);

    @Test
    void alphaIsTheEwmaOfTheMarkedFractionPerWindow() {
        final Dctcp cc = new Dctcp(FLOW, new Dctcp.Config().initialAlpha(0));
        double alpha = 0;
        long nowNs = 0;
        for (int window = 0; window < 5; window++) {
            for (int i = 0; i < 10; i++) {
                cc.onPacketSent(nowNs++, MTU);
            }
            for (int i = 0; i < 10; i++) {
                // The ACK that opens the very first window is counted in it too.
                cc.onAck(nowNs++, MTU, -1, i < 3);
            }
            alpha = alpha * 15 / 16 + 0.3 / 16;
            assertThat(cc.alpha()).as("window %d", window).isCloseTo(alpha, within(1e-12));
        }
    }

    @Test
    void cutsByHalfAlphaOncePerWindow() {
        final Dctcp cc = new Dctcp(FLOW, new Dctcp.Config());
        for (int i = 0; i < 100; i++) {
            cc.onPacketSent(i, MTU);
        }
        final long cwnd = cc.windowBytes();
        cc.onAck(1_000, MTU, -1, true);
        assertThat(cc.windowBytes()).isEqualTo(cwnd / 2); // alpha starts at 1
        cc.onAck(1_001, MTU, -1, true);
        cc.onAck(1_002, MTU, -1, true);
        assertThat(cc.windowBytes()).as("same window").isEqualTo(cwnd / 2);
    }

    @Test
    void growsOneMtuPerWindowWithoutMarks() {
        final Dctcp cc = new Dctcp(FLOW, new Dctcp.Config());
        final long cwnd = cc.windowBytes();
        for (int i = 0; i < 100; i++) {
            cc.onPacketSent(i, MTU);
            cc.onAck(i, MTU, -1, false);
        }
        assertThat(cc.windowBytes()).isBetween(cwnd + MTU - 10, cwnd + MTU);
    }

    @Test
    void timeoutResetsToOneMtu() {
        final Dctcp cc = new Dctcp(FLOW, new Dctcp.Config());
        cc.onTimeout(0);
        assertThat(cc.windowBytes()).isEqualTo(MTU);
        assertThat(cc.rateBps()).isEqualTo(FLOW.lineRateBps());
    }
}
