package org.vrdma.vswitch.udp;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.IoEventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.socket.DatagramChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitch;
import org.vrdma.vswitch.pipeline.VSwitchConfig;
import org.vrdma.vswitch.runtime.EventLoopTimerService;
import org.vrdma.vswitch.runtime.LoopPollers;
import org.vrdma.vswitch.runtime.NettyRuntime;

/**
 * One host of the real-time data path: a {@link VSwitch} on one Netty event loop, with that loop's
 * {@link EventLoopTimerService} and a UDP channel bound to the given address. Several hosts may run
 * in one JVM, on the loops of one group.
 *
 * <p>Everything touching the switch (ENI frames, configuration, counters) runs on its loop: use
 * {@link #execute} or {@link #call}.
 */
public final class VSwitchHost implements AutoCloseable {
    /**
     * How to start a host.
     *
     * @param bindIpv4 address to bind, e.g. 127.0.0.1
     * @param port UDP port, 0 for an ephemeral one
     * @param config the switch configuration; its underlay address is replaced by the bound one
     * @param gso use UDP GSO when the transport supports it
     * @param gro use UDP GRO when the transport supports it
     */
    public record Options(String bindIpv4, int port, VSwitchConfig config, boolean gso, boolean gro) {
        public static Options loopback(String name) {
            return new Options("127.0.0.1", 0, VSwitchConfig.of(name, UnderlayAddress.NONE), true, true);
        }

        public Options withOffloads(boolean useGso, boolean useGro) {
            return new Options(bindIpv4, port, config, useGso, useGro);
        }

        public Options withConfig(VSwitchConfig c) {
            return new Options(bindIpv4, port, c, gso, gro);
        }
    }

    static final int SOCKET_BUFFER_BYTES = 4 << 20;
    static final int MAX_DATAGRAM_BYTES = 9216;
    static final int RECEIVE_BUFFER_BYTES = 64 * 1024;
    static final int MAX_READS_PER_WAKEUP = 64;

    private final EventLoop loop;
    private final DatagramChannel channel;
    private final NettyUnderlay underlay;
    private final VSwitch vswitch;
    private final long underlayAddress;
    private final NettyRuntime runtime;
    private final IntSupplier poller;

    private VSwitchHost(
            EventLoop loop,
            DatagramChannel channel,
            NettyUnderlay underlay,
            VSwitch vswitch,
            long address,
            NettyRuntime runtime,
            IntSupplier poller) {
        this.poller = poller;
        this.loop = loop;
        this.channel = channel;
        this.underlay = underlay;
        this.vswitch = vswitch;
        this.underlayAddress = address;
        this.runtime = runtime;
    }

    /** Binds the channel on the next loop of {@code group} and creates the switch there. */
    public static VSwitchHost start(EventLoopGroup group, NettyRuntime runtime, Options options)
            throws InterruptedException {
        EventLoop loop = group.next();
        boolean epoll = runtime == NettyRuntime.EPOLL;
        boolean gso = options.gso() && epoll && EpollDatagramChannel.isSegmentedDatagramPacketSupported();
        boolean groWanted = options.gro() && epoll;
        // The socket is read by DatagramReceiver (recvmmsg through FFM, no objects per datagram); the
        // channel only sends. Without native access the channel reads as before.
        boolean direct = epoll && DatagramReceiver.available();
        NettyUnderlay underlay = new NettyUnderlay(gso, groWanted);
        Bootstrap bootstrap = new Bootstrap()
                .group(loop)
                .channel(runtime.datagramChannelClass())
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(8 << 20, 16 << 20))
                // Read until the socket is empty (up to 64 reads per wake-up), not only while buffers fill:
                // datagrams rarely fill one, and stopping after each costs an epoll_wait per datagram. Ending a
                // burst early (after a read of small datagrams) left datagrams queued until the next arrival.
                .option(
                        ChannelOption.RECVBUF_ALLOCATOR,
                        new FixedRecvByteBufAllocator(RECEIVE_BUFFER_BYTES)
                                .respectMaybeMoreData(false)
                                .maxMessagesPerRead(MAX_READS_PER_WAKEUP))
                .option(ChannelOption.AUTO_READ, !direct)
                .handler(underlay);
        if (epoll && !groWanted) {
            // recvmmsg: several datagrams per system call, as slices of one receive buffer.
            bootstrap.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, MAX_DATAGRAM_BYTES);
        }
        DatagramChannel channel = (DatagramChannel) bootstrap
                .bind(new InetSocketAddress(options.bindIpv4(), options.port()))
                .sync()
                .channel();
        boolean gro = groWanted && channel.config().setOption(EpollChannelOption.UDP_GRO, true);
        if (groWanted && !gro) {
            underlay = replaceHandler(channel, underlay, gso);
        }
        InetSocketAddress bound = (InetSocketAddress) channel.localAddress();
        long address = NettyUnderlay.fromSocketAddress(bound);
        VSwitchConfig config = options.config().withUnderlayAddress(address);
        NettyUnderlay u = underlay;
        IntSupplier poller = u::pollSocket;
        VSwitch vswitch;
        try {
            vswitch = loop.submit(() -> {
                        VSwitch vs =
                                new VSwitch(config, new EventLoopTimerService(loop), PooledByteBufAllocator.DEFAULT, u);
                        u.attach(channel, vs);
                        if (u.gso() && DatagramSender.available()) {
                            // GSO sends leave through sendmmsg called directly (FFM), gathered from
                            // the send arena: no packet object or outbound-buffer entry per send.
                            int fd = ((EpollDatagramChannel) channel).fd().intValue();
                            u.sender(new DatagramSender(fd, u::onSendError));
                        }
                        if (direct) {
                            startReceiver(u, channel, loop, gro);
                        }
                        if (u.directReads() && !"false".equals(System.getProperty("vrdma.underlay.pollDirectly"))) {
                            // A busy-polling loop reads the socket itself while it spins
                            // (-Dvrdma.underlay.pollDirectly=false: it asks epoll, to compare).
                            LoopPollers.current().add(poller);
                        }
                        return vs;
                    })
                    .get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            channel.close();
            throw new IllegalStateException("could not start the switch", e);
        }
        return new VSwitchHost(loop, channel, u, vswitch, address, runtime, poller);
    }

    private static void startReceiver(NettyUnderlay underlay, DatagramChannel channel, EventLoop loop, boolean gro) {
        try {
            int fd = ((EpollDatagramChannel) channel).fd().intValue();
            int slotBytes = gro ? RECEIVE_BUFFER_BYTES : MAX_DATAGRAM_BYTES;
            underlay.receiver(DatagramReceiver.start(
                    underlay, PooledByteBufAllocator.DEFAULT, (IoEventLoop) loop, fd, slotBytes));
        } catch (IOException | RuntimeException e) {
            // The channel reads instead.
            channel.config().setAutoRead(true);
        }
    }

    private static NettyUnderlay replaceHandler(DatagramChannel channel, NettyUnderlay old, boolean gso) {
        NettyUnderlay fallback = new NettyUnderlay(gso, false);
        channel.pipeline().replace(old, null, fallback);
        return fallback;
    }

    /** This host's underlay address (the bound IPv4 address and port). */
    public long underlayAddress() {
        return underlayAddress;
    }

    public NettyRuntime runtime() {
        return runtime;
    }

    /** Whether sends use UDP GSO. */
    public boolean gsoActive() {
        return underlay.gso();
    }

    /** Whether the socket has UDP GRO on. */
    public boolean groActive() {
        return underlay.gro();
    }

    /**
     * The socket's receive buffer as the kernel granted it: twice the smaller of the requested
     * {@value #SOCKET_BUFFER_BYTES} bytes and {@code net.core.rmem_max} (425,984 bytes with the
     * common default of 212,992 for an ordinary user), what datagrams waiting to be read may occupy.
     */
    public int receiveBufferBytes() {
        return channel.config().getReceiveBufferSize();
    }

    /**
     * Asks for another receive buffer ({@code SO_RCVBUF}; the kernel doubles it and caps it as for
     * any user) and returns what it granted, as {@link #receiveBufferBytes()}.
     */
    public int receiveBufferBytes(int requestedBytes) {
        channel.config().setReceiveBufferSize(requestedBytes);
        return receiveBufferBytes();
    }

    public NettyUnderlay underlay() {
        return underlay;
    }

    public EventLoop eventLoop() {
        return loop;
    }

    /** The switch; touch it only on {@link #eventLoop()}. */
    public VSwitch vswitch() {
        return vswitch;
    }

    /** Runs {@code action} on the switch's loop. */
    public void execute(Consumer<VSwitch> action) {
        loop.execute(() -> action.accept(vswitch));
    }

    /** Runs {@code action} on the switch's loop and waits for its result. */
    public <T> T call(Function<VSwitch, T> action) {
        try {
            return loop.submit(() -> action.apply(vswitch)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Releases what the switch holds and closes the channel. */
    @Override
    public void close() {
        if (!loop.isShuttingDown()) {
            call(vs -> {
                LoopPollers.current().remove(poller);
                vs.close();
                return null;
            });
        }
        channel.close().syncUninterruptibly();
    }
}
