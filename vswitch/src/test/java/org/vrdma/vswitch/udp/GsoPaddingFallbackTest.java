package org.vrdma.vswitch.udp;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.vswitch.udp.UdpTestHosts.awaitAtLeast;
import static org.vrdma.vswitch.udp.UdpTestHosts.count;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The GSO padding fallback, triggered for real: two hosts in a network namespace this test creates,
 * whose loopback has a 1500-byte MTU. Two 1470-byte datagrams fit the path, but padded to a
 * 1486-byte segment size the GSO send exceeds it and the kernel refuses it ({@code EMSGSIZE}); the
 * underlay counts the error and turns padding off for the channel, and the same datagrams then
 * leave unpadded and arrive.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GsoPaddingFallbackTest {
    private static final int MTU = 1500;
    /** IPv4 and UDP headers: a datagram of this payload fills the MTU exactly. */
    private static final int FITS_BYTES = MTU - 20 - 8 - 2;

    @Test
    void aGsoSendRefusedForItsPaddingTurnsPaddingOffAndTheDatagramsThenLeave() throws Exception {
        String ns = "dprx-" + ProcessHandle.current().pid() + "-gso";
        run("ip", "netns", "add", ns);
        EventLoopGroup group = UdpTestHosts.epollGroup(2, "gso-fallback");
        VSwitchHost a = null;
        VSwitchHost b = null;
        try {
            run("ip", "-n", ns, "link", "set", "lo", "mtu", Integer.toString(MTU), "up");
            // Sockets belong to the namespace of the thread that creates them.
            VSwitchHost[] hosts = inNamespace(ns, () ->
                    new VSwitchHost[] {UdpTestHosts.loopbackHost(group, "a"), UdpTestHosts.loopbackHost(group, "b")});
            a = hosts[0];
            b = hosts[1];
            assertThat(a.gsoActive()).as("GSO on epoll").isTrue();
            VSwitchHost sender = a;
            VSwitchHost receiver = b;
            long to = b.underlayAddress();

            // Padded: refused by the kernel, counted, padding off; RC would resend what was lost.
            sender.call(vs -> sendTwo(sender, to));
            LongSupplier errors = () -> count(sender, NettyUnderlay::sendErrors);
            LongSupplier received = () -> count(receiver, NettyUnderlay::datagramsReceived);
            awaitAtLeast(errors, 1);
            String error = sender.call(vs -> sender.underlay().lastSendError());
            // EMSGSIZE here (the socket is dual-stack); EINVAL where the IPv4 path checks the segment size.
            assertThat(error).containsAnyOf("Message too long", "Invalid argument");
            assertThat(count(sender, NettyUnderlay::gsoSends)).isEqualTo(1);
            assertThat(received.getAsLong()).isZero();

            // Unpadded: the same datagrams leave as one GSO send and arrive.
            sender.call(vs -> sendTwo(sender, to));
            awaitAtLeast(received, 2);
            assertThat(count(sender, NettyUnderlay::gsoSends)).isEqualTo(2);
            assertThat(errors.getAsLong()).as("no further errors").isEqualTo(1);
            assertThat(received.getAsLong()).isEqualTo(2);
        } finally {
            UdpTestHosts.closeAll(group, a, b);
            run("ip", "netns", "delete", ns);
        }
    }

    /** Two datagrams of {@link #FITS_BYTES} to {@code to}, flushed together (one GSO batch). */
    private static Void sendTwo(VSwitchHost host, long to) {
        for (int i = 0; i < 2; i++) {
            ByteBuf d = PooledByteBufAllocator.DEFAULT.directBuffer(FITS_BYTES);
            d.writeZero(FITS_BYTES);
            host.underlay().send(d, to);
        }
        return null;
    }

    private interface Action<T> {
        T run() throws Exception;
    }

    /** Runs {@code action} on a new thread that first joins network namespace {@code ns}. */
    private static <T> T inNamespace(String ns, Action<T> action) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                setns(ns);
                result.complete(action.run());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        t.start();
        return result.get(30, TimeUnit.SECONDS);
    }

    private static void setns(String ns) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle open = linker.downcallHandle(
                linker.defaultLookup().find("open").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        MethodHandle setns = linker.downcallHandle(
                linker.defaultLookup().find("setns").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle close = linker.downcallHandle(
                linker.defaultLookup().find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) open.invokeExact(arena.allocateFrom("/run/netns/" + ns), 0);
            if (fd < 0) {
                throw new IOException("cannot open /run/netns/" + ns);
            }
            int rc = (int) setns.invokeExact(fd, 0x40000000 /* CLONE_NEWNET */);
            int ignored = (int) close.invokeExact(fd);
            if (rc != 0) {
                throw new IOException("setns(" + ns + ") failed");
            }
        }
    }

    private static void run(String... command) throws Exception {
        Process p =
                new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " timed out");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed: " + out);
        }
    }
}
