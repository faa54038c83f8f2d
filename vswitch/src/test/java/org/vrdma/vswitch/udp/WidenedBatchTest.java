package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vswitch.udp.UdpTestHosts.awaitAtLeast;
import static org.vrdma.vswitch.udp.UdpTestHosts.count;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.vswitch.pipeline.UnderlayPort;

/**
 * A short datagram followed by a larger one to the same host (an ACK, then the response that
 * follows it) leaves in one GSO send: the first is padded to the second's segment size. Over real
 * loopback UDP with GRO, both arrive in one read. Larger datagrams, or a batch of two already,
 * are not widened.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WidenedBatchTest {
    private static final int ACK_BYTES = 70;
    private static final int SEND_BYTES = 130;

    @AutoClose
    private final UdpTestHosts.Pair hosts = new UdpTestHosts.Pair("widen");

    private final VSwitchHost a = hosts.a;
    private final VSwitchHost b = hosts.b;

    @BeforeEach
    void start() {
        assertThat(a.gsoActive()).as("GSO on epoll").isTrue();
        assertThat(b.groActive()).as("GRO on epoll").isTrue();
    }

    @Test
    void aShortDatagramThenALargerFrameBuiltInPlaceLeaveInOneGsoSendAndArriveInOneRead() {
        long to = b.underlayAddress();
        a.call(vs -> {
            send(a, inPlace(a, ACK_BYTES, 1), to);
            send(a, inPlace(a, SEND_BYTES, 2), to);
            return null;
        });
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 2);
        assertThat(count(a, NettyUnderlay::widenedDatagrams)).isEqualTo(1);
        assertThat(count(a, NettyUnderlay::gsoSends)).isEqualTo(1);
        assertThat(count(a, NettyUnderlay::gsoSegments)).isEqualTo(2);
        assertThat(count(a, NettyUnderlay::inPlaceDatagrams)).isEqualTo(2);
        assertThat(count(b, NettyUnderlay::groCoalescedDatagrams))
                .as("one GRO read")
                .isEqualTo(2);
        assertThat(count(b, NettyUnderlay::readBursts)).isEqualTo(1);
    }

    @Test
    void copiedDatagramsAreWidenedToo() {
        long to = b.underlayAddress();
        a.call(vs -> {
            send(a, copied(ACK_BYTES, 1), to);
            send(a, copied(SEND_BYTES, 2), to);
            return null;
        });
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 2);
        assertThat(count(a, NettyUnderlay::widenedDatagrams)).isEqualTo(1);
        assertThat(count(a, NettyUnderlay::gsoSends)).isEqualTo(1);
        assertThat(count(b, NettyUnderlay::groCoalescedDatagrams)).isEqualTo(2);
    }

    @Test
    void largeDatagramsAndBatchesOfTwoAreNotWidened() {
        long to = b.underlayAddress();
        a.call(vs -> {
            // Over the size limit: two sends.
            send(a, inPlace(a, ACK_BYTES, 1), to);
            send(a, inPlace(a, NettyUnderlay.WIDEN_MAX_BYTES + 1, 2), to);
            return null;
        });
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 2);
        a.call(vs -> {
            // Two short ones already batched: the larger one starts a new send.
            send(a, inPlace(a, ACK_BYTES, 3), to);
            send(a, inPlace(a, ACK_BYTES, 4), to);
            send(a, inPlace(a, SEND_BYTES, 5), to);
            return null;
        });
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 5);
        assertThat(count(a, NettyUnderlay::widenedDatagrams)).isZero();
        assertThat(count(a, NettyUnderlay::gsoSends))
                .as("only the two short ones together")
                .isEqualTo(1);
        assertThat(count(a, NettyUnderlay::datagramsSent)).isEqualTo(5);
    }

    /** A frame built where it leaves, as a vNIC builds it: the switch's headers go in the headroom. */
    private static ByteBuf inPlace(VSwitchHost host, int datagramBytes, int fill) {
        int outer = UnderlayPort.OUTER_HEADERS_BYTES;
        ByteBuf frame = host.underlay().frameAllocator().directBuffer(outer + datagramBytes);
        for (int i = 0; i < outer + datagramBytes; i++) {
            frame.writeByte(fill);
        }
        return frame.readerIndex(outer);
    }

    private static ByteBuf copied(int datagramBytes, int fill) {
        ByteBuf d = PooledByteBufAllocator.DEFAULT.directBuffer(datagramBytes);
        for (int i = 0; i < datagramBytes; i++) {
            d.writeByte(fill);
        }
        return d;
    }

    private static void send(VSwitchHost host, ByteBuf datagram, long to) {
        host.underlay().send(datagram, to);
    }
}
