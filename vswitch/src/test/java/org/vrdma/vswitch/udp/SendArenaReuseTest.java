package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.vswitch.runtime.NettyRuntime;

/**
 * Full send arenas are reused once nothing holds them, instead of going back to the allocator;
 * an arena that a frame still holds is not written over.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SendArenaReuseTest {
    private static final int DATAGRAM_BYTES = 4000;
    private static final int DATAGRAMS_PER_ROUND = 100;
    private static final int ROUNDS = 24;

    private EventLoopGroup group;
    private VSwitchHost a;
    private VSwitchHost b;

    @BeforeEach
    void start() throws Exception {
        if (NettyRuntime.best() != NettyRuntime.EPOLL) {
            throw new AssertionError("GSO needs the epoll transport (Linux x86_64), which the build provides");
        }
        group = NettyRuntime.EPOLL.newEventLoopGroup(2, "arena");
        a = VSwitchHost.start(group, NettyRuntime.EPOLL, VSwitchHost.Options.loopback("a"));
        b = VSwitchHost.start(group, NettyRuntime.EPOLL, VSwitchHost.Options.loopback("b"));
    }

    @AfterEach
    void stop() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }

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

    private static long count(VSwitchHost host, ToLongFunction<NettyUnderlay> counter) {
        Long n = host.call(vs -> counter.applyAsLong(host.underlay()));
        return n;
    }

    private static void awaitAtLeast(LongSupplier value, long atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsLong() < atLeast) {
            assertThat(System.nanoTime() - deadline)
                    .as("waited 10 s for %d", atLeast)
                    .isNegative();
            Thread.onSpinWait();
        }
    }
}
