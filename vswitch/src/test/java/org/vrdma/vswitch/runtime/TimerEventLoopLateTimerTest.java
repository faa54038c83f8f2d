package org.vrdma.vswitch.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.UnixChannel;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.TimerService;

/**
 * On a real {@link TimerEventLoop}: a retransmission timer falls due while the loop is still busy
 * with the datagram it read before the deadline, and the ACK that cancels the timer already waits
 * in another socket of the loop when the loop gets to its timers. The ACK is read first and the
 * timer never fires. The order is decided by the loop, not by timing: the ACK is queued in the
 * socket before the handler returns (it waits until the kernel has queued it), and the handler
 * returns only once the timer is well past due.
 */
class TimerEventLoopLateTimerTest {
    private static final long FIONREAD = 0x541B;
    private static final MethodHandle IOCTL = Linker.nativeLinker()
            .downcallHandle(
                    Linker.nativeLinker().defaultLookup().find("ioctl").orElseThrow(),
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                    Linker.Option.firstVariadicArg(2));

    // Epoll: the test reads the socket's queue through its descriptor.
    private final EventLoopGroup group = NettyRuntime.EPOLL.newEventLoopGroup(1, "late-timer");
    private final List<Channel> channels = new ArrayList<>();

    @AfterEach
    void shutdown() throws InterruptedException {
        for (Channel c : channels) {
            c.close().await(5, TimeUnit.SECONDS);
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    private static int queuedBytes(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(ValueLayout.JAVA_INT);
            int rc = (int) IOCTL.invokeExact(fd, FIONREAD, bytes);
            if (rc != 0) {
                throw new IllegalStateException("ioctl(FIONREAD) failed");
            }
            return bytes.get(ValueLayout.JAVA_INT, 0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private Channel bind(EventLoop loop, SimpleChannelInboundHandler<DatagramPacket> handler) throws Exception {
        Channel c = new Bootstrap()
                .group(loop)
                .channel(NettyRuntime.EPOLL.datagramChannelClass())
                .handler(handler)
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        channels.add(c);
        return c;
    }

    @Test
    void theAckQueuedWhileTheLoopWasBusyIsReadBeforeTheLateTimerAndCancelsIt() throws Exception {
        EventLoop loop = group.next();
        EventLoopTimerService timers =
                loop.submit(() -> new EventLoopTimerService(loop)).get(10, TimeUnit.SECONDS);
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch acked = new CountDownLatch(1);
        long[] rto = {TimerService.NO_TIMER};

        Channel ackSocket = bind(loop, new SimpleChannelInboundHandler<>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket msg) {
                events.add("ack");
                timers.cancel(rto[0]);
                acked.countDown();
            }
        });
        InetSocketAddress ackAddress = (InetSocketAddress) ackSocket.localAddress();
        Channel dataSocket = bind(loop, new SimpleChannelInboundHandler<>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket msg) throws Exception {
                events.add("data");
                long deadlineNs = timers.nowNs() + 1_000_000;
                rto[0] = timers.scheduleAt(deadlineNs, (n, id) -> events.add("rto"));
                // The peer's ACK arrives before the deadline (loopback queues it at once) ...
                try (DatagramChannel peer = DatagramChannel.open()) {
                    peer.send(ByteBuffer.wrap(new byte[] {2}), ackAddress);
                }
                // Loopback delivery may finish in a softirq thread: wait until the ACK is queued.
                int fd = ((UnixChannel) ackSocket).fd().intValue();
                long waitedNs = System.nanoTime();
                while (queuedBytes(fd) <= 0) {
                    if (System.nanoTime() - waitedNs > TimeUnit.SECONDS.toNanos(10)) {
                        throw new IllegalStateException("the ACK was not queued");
                    }
                    Thread.onSpinWait();
                }
                // ... while this loop is busy (or off its core) until well after the deadline.
                while (System.nanoTime() - deadlineNs < 2 * LoopTimers.LATE_NS) {
                    Thread.onSpinWait();
                }
            }
        });

        try (DatagramChannel sender = DatagramChannel.open()) {
            sender.send(ByteBuffer.wrap(new byte[] {1}), dataSocket.localAddress());
        }
        assertThat(acked.await(10, TimeUnit.SECONDS)).isTrue();
        // A turn on the loop after the ACK's: the timer, had it not been cancelled, was due by then.
        loop.submit(() -> {}).get(10, TimeUnit.SECONDS);

        long[] counters = loop.submit(() -> new long[] {
                    timers.lateExpiries(),
                    timers.ioTurnsBeforeTimers(),
                    timers.ioTurnsBeforeTimersWithInput(),
                    timers.ioTurnsBeforeTimersThatMovedTheEarliest()
                })
                .get(10, TimeUnit.SECONDS);
        assertThat(events).as(java.util.Arrays.toString(counters)).containsExactly("data", "ack");
        assertThat(counters).containsExactly(1, 1, 1, 1);
        assertThat(timers.pendingTimers()).isZero();
    }
}
