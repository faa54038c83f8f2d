package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vswitch.udp.UdpTestHosts.awaitAtLeast;
import static org.vrdma.vswitch.udp.UdpTestHosts.count;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.vswitch.pipeline.UnderlayPort;

/**
 * Full send arenas are reused once nothing holds them, instead of going back to the allocator;
 * an arena that a frame still holds is not written over.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SendArenaReuseTest {
    private static final int DATAGRAM_BYTES = 4000;
    private static final int DATAGRAMS_PER_ROUND = 100;
    private static final int ROUNDS = 24;

    @AutoClose
    private final UdpTestHosts.Pair hosts = new UdpTestHosts.Pair("arena");

    private final VSwitchHost a = hosts.a;
    private final VSwitchHost b = hosts.b;

    @Test
    void fullArenasAreReusedAndAHeldFrameKeepsItsBytes() {
        long to = b.underlayAddress();
        int outer = UnderlayPort.OUTER_HEADERS_BYTES;
        // A frame from the first arena that is never sent: its arena must not be written over.
        ByteBuf held = a.call(vs -> {
            ByteBuf f = a.underlay().frameAllocator().directBuffer(outer + DATAGRAM_BYTES);
            for (int i = 0; i < outer + DATAGRAM_BYTES; i++) {
                f.writeByte(0x5A);
            }
            return f;
        });
        long sent = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] fill = new byte[DATAGRAM_BYTES];
            Arrays.fill(fill, (byte) round);
            a.call(vs -> {
                for (int i = 0; i < DATAGRAMS_PER_ROUND; i++) {
                    ByteBuf d = PooledByteBufAllocator.DEFAULT.directBuffer(DATAGRAM_BYTES);
                    a.underlay().send(d.writeBytes(fill), to);
                }
                return null;
            });
            sent += DATAGRAMS_PER_ROUND;
            long expected = sent;
            awaitAtLeast(() -> count(a, NettyUnderlay::datagramsSent), expected);
        }
        long arenaRounds = (long) ROUNDS * DATAGRAMS_PER_ROUND * DATAGRAM_BYTES / NettyUnderlay.ARENA_BYTES;
        assertThat(arenaRounds).as("the test fills many arenas").isGreaterThan(10);
        assertThat(count(a, NettyUnderlay::arenasAllocated))
                .as("arenas taken from the allocator")
                .isLessThanOrEqualTo(3);
        a.call(vs -> {
            for (int i = 0; i < outer + DATAGRAM_BYTES; i++) {
                assertThat(held.getByte(i)).as("held frame byte %d", i).isEqualTo((byte) 0x5A);
            }
            held.release();
            return null;
        });
    }
}
