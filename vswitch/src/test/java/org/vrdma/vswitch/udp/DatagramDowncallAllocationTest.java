package org.vrdma.vswitch.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.util.ResourceLeakDetector;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.vswitch.runtime.NettyRuntime;

/**
 * The underlay's system calls allocate nothing per call on real loopback sockets: a {@code
 * sendmmsg} per flush, a {@code recvmmsg} that reads the datagram, and one that finds the socket
 * empty ({@code EAGAIN}, as a busy-polling loop meets it on every idle turn).
 *
 * <p>The round trips run in a JVM without escape analysis: an object the JIT removes only when a
 * call inlines completely (as the capture segment a {@code captureCallState} downcall slices per
 * call) is then allocated, as it is wherever the call does not inline.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DatagramDowncallAllocationTest {
    private static final int WARMUP_ROUND_TRIPS = 20_000;
    private static final int MEASURED_ROUND_TRIPS = 20_000;
    // Shorter than a Geneve header: the switch counts it as truncated and drops it, at no cost.
    private static final int DATAGRAM_BYTES = 4;
    // Room for the measurement's own noise; a capture-state slice per call is ~48 bytes x 3 x 20,000.
    private static final long ALLOWED_BYTES = 16_384;

    @Test
    void sendAndReceiveDowncallsAllocateNothingPerCall() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process child = new ProcessBuilder(
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "-XX:-DoEscapeAnalysis",
                        "-cp",
                        System.getProperty("java.class.path"),
                        RoundTrips.class.getName())
                .redirectErrorStream(true)
                .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor()).as(output).isZero();
        String[] last = output.strip().lines().reduce((a, b) -> b).orElseThrow().split(" ");
        long bytes = Long.parseLong(last[0]);
        long read = Long.parseLong(last[1]);
        long dropped = Long.parseLong(last[2]);
        long receiveCalls = Long.parseLong(last[3]);
        long receiveErrors = Long.parseLong(last[4]);
        assertThat(dropped).as("messages not sent").isZero();
        assertThat(read).as("datagrams read").isEqualTo(WARMUP_ROUND_TRIPS + MEASURED_ROUND_TRIPS);
        // Two reads per round trip, the second of which met an empty socket.
        assertThat(receiveCalls).as("recvmmsg calls").isGreaterThanOrEqualTo(2L * MEASURED_ROUND_TRIPS);
        // Each empty read's errno was read as EAGAIN: none counted as a failed read.
        assertThat(receiveErrors).as("failed reads").isZero();
        assertThat(bytes)
                .as("bytes allocated over %d round trips", MEASURED_ROUND_TRIPS)
                .isLessThan(ALLOWED_BYTES);
    }

    /** The round trips, in the child JVM: prints bytes allocated, datagrams read, messages dropped, reads, failed reads. */
    static final class RoundTrips {
        public static void main(String[] args) throws Exception {
            // A leak-tracked buffer allocates a record per access: the measurement is of the path itself.
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
            EventLoopGroup group = NettyRuntime.EPOLL.newEventLoopGroup(1, "downcall-alloc");
            VSwitchHost b = VSwitchHost.start(group, NettyRuntime.EPOLL, VSwitchHost.Options.loopback("b"));
            EpollDatagramChannel from = (EpollDatagramChannel) new Bootstrap()
                    .group(group)
                    .channel(EpollDatagramChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .bind(new InetSocketAddress("127.0.0.1", 0))
                    .sync()
                    .channel();
            try {
                if (!b.underlay().directReads()) {
                    throw new AssertionError("the socket is not read with recvmmsg");
                }
                CompletableFuture<long[]> done = new CompletableFuture<>();
                b.execute(vs -> {
                    try {
                        done.complete(run(b, from.fd().intValue()));
                    } catch (Throwable t) {
                        done.completeExceptionally(t);
                    }
                });
                long[] r = done.get(150, TimeUnit.SECONDS);
                System.out.println(r[0] + " " + r[1] + " " + r[2] + " " + r[3] + " " + r[4]);
            } finally {
                from.close().await(5, TimeUnit.SECONDS);
                b.close();
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            }
        }

        /** On the switch's loop. */
        private static long[] run(VSwitchHost b, int fromFd) {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long to = b.underlayAddress();
            NettyUnderlay underlay = b.underlay();
            ByteBuf payload = PooledByteBufAllocator.DEFAULT.directBuffer(DATAGRAM_BYTES);
            payload.writeZero(DATAGRAM_BYTES);
            long read = 0;
            long startBytes = 0;
            long startCalls = 0;
            try (DatagramSender sender = new DatagramSender(fromFd, errno -> {})) {
                for (int i = 0; i < WARMUP_ROUND_TRIPS + MEASURED_ROUND_TRIPS; i++) {
                    if (i == WARMUP_ROUND_TRIPS) {
                        startCalls = underlay.receiveCalls();
                        startBytes = threads.getCurrentThreadAllocatedBytes();
                    }
                    sender.begin(to, 0);
                    sender.gather(payload.memoryAddress(), DATAGRAM_BYTES);
                    sender.end();
                    sender.flush();
                    // Loopback delivers within sendmmsg: the datagram is there, then the socket is empty.
                    read += underlay.pollSocket();
                    read += underlay.pollSocket();
                }
                long bytes = threads.getCurrentThreadAllocatedBytes() - startBytes;
                return new long[] {
                    bytes,
                    read,
                    sender.messagesDropped(),
                    underlay.receiveCalls() - startCalls,
                    underlay.receiveErrors()
                };
            } finally {
                payload.release();
            }
        }
    }
}
