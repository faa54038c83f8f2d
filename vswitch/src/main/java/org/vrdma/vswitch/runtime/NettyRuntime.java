package org.vrdma.vswitch.runtime;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.function.Consumer;

/**
 * Chooses Netty's I/O transport: epoll where the native library loads (Linux x86_64), NIO
 * elsewhere, so the same code runs on any JVM while Linux gets GSO/GRO and fewer copies. Its loops
 * are {@link TimerEventLoop}s, which wake for the engines' timers themselves.
 */
public enum NettyRuntime {
    EPOLL,
    NIO;

    /** The best transport available here; {@code -Dvrdma.transport=nio} forces NIO. */
    public static NettyRuntime best() {
        if ("nio".equalsIgnoreCase(System.getProperty("vrdma.transport"))) {
            return NIO;
        }
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    public IoHandlerFactory ioHandlerFactory() {
        return this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    public EventLoopGroup newEventLoopGroup(int threads, String name) {
        return new TimerEventLoop.Group(threads, new DefaultThreadFactory(name, true), ioHandlerFactory());
    }

    /**
     * Like {@link #newEventLoopGroup(int, String)}, but each epoll loop polls its sockets for
     * {@code spinNs} after its last event before it sleeps, and stops polling while it keeps losing
     * its core (see {@link SpinThenBlockStrategy}): lower latency and no wake-ups while traffic flows,
     * for one core per loop. NIO, or {@code spinNs <= 0}, gives the ordinary loop.
     */
    public EventLoopGroup newEventLoopGroup(int threads, String name, long spinNs) {
        return newEventLoopGroup(threads, name, spinNs, s -> {});
    }

    /**
     * As {@link #newEventLoopGroup(int, String, long)}, handing each loop's strategy to {@code
     * strategies} as it is created, so a caller can read its counters.
     */
    public EventLoopGroup newEventLoopGroup(
            int threads, String name, long spinNs, Consumer<SpinThenBlockStrategy> strategies) {
        if (this != EPOLL || spinNs <= 0) {
            return newEventLoopGroup(threads, name);
        }
        IoHandlerFactory spinning = EpollIoHandler.newFactory(0, () -> {
            SpinThenBlockStrategy s = new SpinThenBlockStrategy(spinNs);
            strategies.accept(s);
            return s;
        });
        return new TimerEventLoop.Group(threads, new DefaultThreadFactory(name, true), spinning);
    }

    public Class<? extends DatagramChannel> datagramChannelClass() {
        return this == EPOLL ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }
}
