package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.vrdma.vswitch.runtime.NettyRuntime;

/** What the real-loopback underlay tests share: epoll loops, hosts, their teardown, counter waits. */
final class UdpTestHosts {
    private UdpTestHosts() {}

    /** An epoll loop group; the direct sender, GSO and GRO need it, and the build provides it. */
    static EventLoopGroup epollGroup(int threads, String name) {
        if (NettyRuntime.best() != NettyRuntime.EPOLL) {
            throw new AssertionError(
                    "the underlay's direct sender, GSO and GRO need the epoll transport (Linux x86_64),"
                            + " which the build provides");
        }
        return NettyRuntime.EPOLL.newEventLoopGroup(threads, name);
    }

    static VSwitchHost loopbackHost(EventLoopGroup group, String name) throws Exception {
        return VSwitchHost.start(group, NettyRuntime.EPOLL, VSwitchHost.Options.loopback(name));
    }

    /** Closes the hosts that were started (nulls are skipped), then the group. */
    static void closeAll(EventLoopGroup group, VSwitchHost... hosts) throws Exception {
        for (VSwitchHost host : hosts) {
            if (host != null) {
                host.close();
            }
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Two loopback hosts, a and b, on a two-loop epoll group: a test class's per-test fixture as an
     * {@code @AutoClose} field.
     */
    static final class Pair implements AutoCloseable {
        final EventLoopGroup group;
        final VSwitchHost a;
        final VSwitchHost b;

        Pair(String name) {
            group = epollGroup(2, name);
            VSwitchHost first = null;
            try {
                first = loopbackHost(group, "a");
                a = first;
                b = loopbackHost(group, "b");
            } catch (Exception e) {
                try {
                    closeAll(group, first);
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw new IllegalStateException("loopback hosts did not start", e);
            }
        }

        @Override
        public void close() throws Exception {
            closeAll(group, a, b);
        }
    }

    /** A counter of the host's underlay, read on its loop. */
    static long count(VSwitchHost host, ToLongFunction<NettyUnderlay> counter) {
        Long n = host.call(vs -> counter.applyAsLong(host.underlay()));
        return n;
    }

    /** Waits up to 10 s for {@code value} to reach {@code atLeast}; each read is a round trip to a loop. */
    static void awaitAtLeast(LongSupplier value, long atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsLong() < atLeast) {
            assertThat(System.nanoTime() - deadline)
                    .as("waited 10 s for %d", atLeast)
                    .isNegative();
            Thread.onSpinWait();
        }
    }
}
