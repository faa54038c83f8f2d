package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vswitch.udp.UdpTestHosts.awaitAtLeast;
import static org.vrdma.vswitch.udp.UdpTestHosts.count;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Inside a read burst that goes on after a full {@code recvmmsg}, what the datagrams made the switch
 * send (a receiver's ACKs) leaves at once instead of when the socket is empty; the flush task queued
 * for those sends then finds them gone and does not flush again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadCallFlushTest {
    @AutoClose
    private final UdpTestHosts.Pair hosts = new UdpTestHosts.Pair("readcall");

    private final VSwitchHost a = hosts.a;
    private final VSwitchHost b = hosts.b;

    @Test
    void whatAReadCallQueuedLeavesBeforeTheBurstEndsAndItsFlushTaskFindsNothing() {
        long to = b.underlayAddress();
        long[] inside = a.call(vs -> {
            long calls0 = a.underlay().sendCalls();
            a.underlay().send(datagram(70), to);
            a.underlay().send(datagram(70), to);
            long queued = a.underlay().sendCalls() - calls0;
            a.underlay().onReadCallComplete();
            return new long[] {
                queued, a.underlay().sendCalls() - calls0, a.underlay().flushes()
            };
        });
        assertThat(inside[0]).as("queued until a flush").isZero();
        assertThat(inside[1]).as("sent by the read call's flush").isEqualTo(1);
        assertThat(inside[2]).isEqualTo(1);
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 2);
        // The flush task the sends queued has run by now (a later task on the same loop).
        assertThat(count(a, NettyUnderlay::flushes)).as("no second flush").isEqualTo(1);
    }

    @Test
    void aReadCallThatQueuedNothingDoesNotFlush() {
        long flushes = a.call(vs -> {
            a.underlay().onReadCallComplete();
            return a.underlay().flushes();
        });
        assertThat(flushes).isZero();
        assertThat(count(a, NettyUnderlay::sendCalls)).isZero();
    }

    @Test
    void sendsAfterTheReadCallsFlushAreFlushedByTheirOwnTask() {
        long to = b.underlayAddress();
        a.call(vs -> {
            a.underlay().send(datagram(70), to);
            a.underlay().onReadCallComplete();
            // Sent after the mid-burst flush, while the first flush task is still queued.
            a.underlay().send(datagram(70), to);
            return null;
        });
        awaitAtLeast(() -> count(b, NettyUnderlay::datagramsReceived), 2);
        assertThat(count(a, NettyUnderlay::sendCalls)).isEqualTo(2);
        assertThat(count(a, NettyUnderlay::flushes)).isEqualTo(2);
    }

    private static ByteBuf datagram(int bytes) {
        ByteBuf d = PooledByteBufAllocator.DEFAULT.directBuffer(bytes);
        d.writeZero(bytes);
        return d;
    }
}
