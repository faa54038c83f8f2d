package org.vrdma.harness.perf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * The kernel TCP baseline on 127.0.0.1: a plain Java socket pair (blocking {@link SocketChannel}s
 * with direct buffers, so the JVM adds no copy of its own). A bulk stream of fixed-size writes
 * measures single-stream bandwidth; a ping-pong with {@code TCP_NODELAY} measures half round-trip
 * latency, as {@code sockperf ping-pong} does. A UDP ping-pong of one datagram per hop, in the same
 * shape, is the kernel's floor under the overlay (whose hops are UDP datagrams too).
 */
public final class TcpBaseline {
    /**
     * Bytes the receiver counted over the time between the first write and the last byte read, and
     * the CPU time (user + system) the writing and the reading thread spent meanwhile (-1 where the
     * JVM does not measure thread CPU time). On loopback the kernel's receive path mostly runs in the
     * writer's system call, so the two together are what the stream cost.
     */
    public record Bandwidth(long bytes, long elapsedNs, long writerCpuNs, long readerCpuNs) {
        public double gbps() {
            return elapsedNs <= 0 ? 0 : bytes * 8.0 / elapsedNs;
        }

        /** Both threads' CPU time per {@code unitBytes} streamed, in µs; NaN where not measured. */
        public double cpuUsPer(int unitBytes) {
            if (writerCpuNs < 0 || readerCpuNs < 0 || bytes <= 0) {
                return Double.NaN;
            }
            return (writerCpuNs + readerCpuNs) / 1e3 * unitBytes / bytes;
        }
    }

    /** Half round-trip latencies in ns. */
    public record Latency(long iterations, long p50Ns, long p99Ns, long p999Ns, long maxNs) {
        /** The percentiles of {@code iterations} half round trips recorded in {@code histogram}. */
        static Latency of(long iterations, Histogram histogram) {
            return new Latency(
                    iterations,
                    histogram.getValueAtPercentile(50),
                    histogram.getValueAtPercentile(99),
                    histogram.getValueAtPercentile(99.9),
                    histogram.getMaxValue());
        }
    }

    private TcpBaseline() {}

    /** Streams {@code writeBytes}-byte writes for {@code durationNs}, then closes the stream. */
    public static Bandwidth bandwidth(int writeBytes, long durationNs) {
        try (Pair pair = Pair.open()) {
            AtomicLong received = new AtomicLong();
            AtomicLong lastByteNs = new AtomicLong();
            AtomicLong readerCpuNs = new AtomicLong(-1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread reader = Thread.ofPlatform().name("tcp-bw-reader").start(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
                long cpu0 = threadCpuNs();
                long total = 0;
                try {
                    int n;
                    while ((n = pair.server.read(buf.clear())) >= 0) {
                        total += n;
                    }
                } catch (IOException e) {
                    failure.set(e);
                }
                lastByteNs.set(System.nanoTime());
                long cpu1 = threadCpuNs();
                readerCpuNs.set(cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0);
                received.set(total);
            });
            ByteBuffer chunk = ByteBuffer.allocateDirect(writeBytes);
            long writerCpu0 = threadCpuNs();
            long start = System.nanoTime();
            long deadline = start + durationNs;
            while (System.nanoTime() - deadline < 0) {
                chunk.clear();
                while (chunk.hasRemaining()) {
                    pair.client.write(chunk);
                }
            }
            long writerCpu1 = threadCpuNs();
            pair.client.shutdownOutput();
            join(reader);
            if (failure.get() != null) {
                throw new IllegalStateException("TCP reader failed", failure.get());
            }
            long writerCpuNs = writerCpu0 < 0 || writerCpu1 < 0 ? -1 : writerCpu1 - writerCpu0;
            return new Bandwidth(received.get(), lastByteNs.get() - start, writerCpuNs, readerCpuNs.get());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A {@code sizeBytes} ping-pong: {@code warmupIterations} unrecorded round trips, then recorded
     * ones until {@code durationNs} passes or {@code maxIterations} are done.
     */
    public static Latency latency(int sizeBytes, long warmupIterations, long durationNs, long maxIterations) {
        return latency(sizeBytes, warmupIterations, durationNs, maxIterations, false);
    }

    /**
     * As {@link #latency(int, long, long, long)}; with {@code busyPoll} both ends poll non-blocking
     * sockets instead of blocking in the read, yielding the core after each empty read, as the
     * overlay's event loops poll while they spin (without their back-off: they never sleep).
     */
    public static Latency latency(
            int sizeBytes, long warmupIterations, long durationNs, long maxIterations, boolean busyPoll) {
        try (Pair pair = Pair.open()) {
            if (busyPoll) {
                pair.client.configureBlocking(false);
                pair.server.configureBlocking(false);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread echo = Thread.ofPlatform().name("tcp-lat-echo").start(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(sizeBytes);
                try {
                    while (readFully(pair.server, buf.clear())) {
                        buf.flip();
                        while (buf.hasRemaining()) {
                            pair.server.write(buf);
                        }
                    }
                } catch (IOException e) {
                    failure.set(e);
                }
            });
            ByteBuffer out = ByteBuffer.allocateDirect(sizeBytes);
            ByteBuffer in = ByteBuffer.allocateDirect(sizeBytes);
            Histogram histogram = new Histogram(3_600_000_000_000L, 3);
            // The warm-up is bounded in time too: a polling pair that loses its cores may crawl.
            long warmupDeadline = System.nanoTime() + durationNs;
            for (long i = 0; i < warmupIterations && System.nanoTime() - warmupDeadline < 0; i++) {
                roundTrip(pair.client, out, in);
            }
            long deadline = System.nanoTime() + durationNs;
            long done = 0;
            while (done < maxIterations && System.nanoTime() - deadline < 0) {
                long t0 = System.nanoTime();
                roundTrip(pair.client, out, in);
                histogram.recordValue((System.nanoTime() - t0) / 2);
                done++;
            }
            pair.client.shutdownOutput();
            join(echo);
            if (failure.get() != null) {
                throw new IllegalStateException("TCP echo failed", failure.get());
            }
            return Latency.of(done, histogram);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A {@code sizeBytes} ping-pong over two connected UDP sockets on 127.0.0.1, one datagram per hop,
     * measured as {@link #latency}. Each end either blocks in its read, or ({@code viaEpoll}) waits in
     * a {@link Selector} ({@code epoll_wait}) and then reads the non-blocking socket, as an event loop
     * does: the same three system calls per hop as the overlay's loops, without their work.
     */
    public static Latency udpLatency(
            int sizeBytes, long warmupIterations, long durationNs, long maxIterations, boolean viaEpoll) {
        try (UdpEnd client = new UdpEnd(viaEpoll);
                UdpEnd server = new UdpEnd(viaEpoll)) {
            client.ch.connect(server.ch.getLocalAddress());
            server.ch.connect(client.ch.getLocalAddress());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread echo = Thread.ofPlatform().name("udp-lat-echo").start(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(sizeBytes + 1);
                try {
                    // A datagram of another size ends the run.
                    while (server.read(buf.clear()) == sizeBytes) {
                        server.ch.write(buf.flip());
                    }
                } catch (IOException e) {
                    failure.set(e);
                }
            });
            ByteBuffer out = ByteBuffer.allocateDirect(sizeBytes);
            ByteBuffer in = ByteBuffer.allocateDirect(sizeBytes + 1);
            Histogram histogram = new Histogram(3_600_000_000_000L, 3);
            for (long i = 0; i < warmupIterations; i++) {
                udpRoundTrip(client, out, in);
            }
            long deadline = System.nanoTime() + durationNs;
            long done = 0;
            while (done < maxIterations && System.nanoTime() - deadline < 0) {
                long t0 = System.nanoTime();
                udpRoundTrip(client, out, in);
                histogram.recordValue((System.nanoTime() - t0) / 2);
                done++;
            }
            client.ch.write(ByteBuffer.allocate(sizeBytes + 1));
            join(echo);
            if (failure.get() != null) {
                throw new IllegalStateException("UDP echo failed", failure.get());
            }
            return Latency.of(done, histogram);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void udpRoundTrip(UdpEnd end, ByteBuffer out, ByteBuffer in) throws IOException {
        end.ch.write(out.clear());
        if (end.read(in.clear()) != out.capacity()) {
            throw new IOException("short datagram in the UDP ping-pong");
        }
    }

    /** One end of the UDP ping-pong: a socket on 127.0.0.1, blocking or waited for through epoll. */
    private static final class UdpEnd implements AutoCloseable {
        final DatagramChannel ch;
        final Selector selector;

        UdpEnd(boolean viaEpoll) throws IOException {
            ch = DatagramChannel.open();
            ch.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            if (viaEpoll) {
                ch.configureBlocking(false);
                selector = Selector.open();
                ch.register(selector, SelectionKey.OP_READ);
            } else {
                selector = null;
            }
        }

        /** Reads one datagram, waiting for it. */
        int read(ByteBuffer buf) throws IOException {
            if (selector == null) {
                return ch.read(buf);
            }
            // As an event loop: wait, then read (level-triggered: data already queued returns at once).
            for (; ; ) {
                selector.select();
                selector.selectedKeys().clear();
                int n = ch.read(buf);
                if (n > 0) {
                    return n;
                }
            }
        }

        @Override
        public void close() throws IOException {
            try {
                ch.close();
            } finally {
                if (selector != null) {
                    selector.close();
                }
            }
        }
    }

    private static void roundTrip(SocketChannel ch, ByteBuffer out, ByteBuffer in) throws IOException {
        out.clear();
        while (out.hasRemaining()) {
            ch.write(out);
        }
        if (!readFully(ch, in.clear())) {
            throw new IOException("peer closed during the ping-pong");
        }
    }

    private static boolean readFully(SocketChannel ch, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            int n = ch.read(buf);
            if (n < 0) {
                return false;
            }
            if (n == 0) {
                // A non-blocking end polling: let a thread waiting for this core (the peer) run first.
                Thread.yield();
            }
        }
        return true;
    }

    /** The calling thread's CPU time (user + system), -1 where not supported. */
    private static long threadCpuNs() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
    }

    private static void join(Thread t) {
        try {
            t.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (t.isAlive()) {
            throw new IllegalStateException(t.getName() + " did not finish in 30 s");
        }
    }

    /** A connected pair of TCP sockets on 127.0.0.1 with TCP_NODELAY. */
    private record Pair(SocketChannel client, SocketChannel server) implements AutoCloseable {
        static Pair open() throws IOException {
            try (ServerSocketChannel listener = ServerSocketChannel.open()) {
                listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                SocketChannel server = listener.accept();
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                server.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return new Pair(client, server);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                client.close();
            } finally {
                server.close();
            }
        }
    }
}
