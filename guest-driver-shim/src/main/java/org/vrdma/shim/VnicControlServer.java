package org.vrdma.shim;

import static org.vrdma.shim.ControlProtocol.*;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.vrdma.vnic.verbs.AsyncEventType;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.MemoryRegion;

/**
 * Serves the guest library's control protocol ({@link ControlProtocol}) for one vNIC {@link Device}
 * on a Unix-domain socket.
 *
 * <p>Each accepted connection is one application context ({@code ibv_open_device}): it gets its own
 * verbs {@code Context} and its own table of handles, so one connection can never name another's
 * objects. When the connection closes (the application closed the device, exited or crashed) every
 * object it still holds is destroyed. Malformed requests get error responses; a request whose length
 * cannot be trusted closes that connection only.
 *
 * <p>Threads: one virtual thread per connection does the socket I/O; every access to the verbs
 * object model runs on the device's executor (the thread that owns the {@link Device}, e.g. its event
 * loop), so the model stays single-threaded.
 */
public final class VnicControlServer implements AutoCloseable {
    private static final Logger LOG = System.getLogger(VnicControlServer.class.getName());
    /** Longest a request waits for the device thread before it fails with ETIMEDOUT. */
    private static final long DEVICE_CALL_TIMEOUT_MS = 10_000;

    private final Path socketPath;
    private final Device device;
    private final Executor deviceExecutor;
    private final ServerSocketChannel listener;
    private final Thread acceptor;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    /** Live sessions; touched on the device thread only. */
    private final List<Session> sessions = new ArrayList<>();
    /** Channel tokens to channels, for BIND_CHANNEL on a second connection. */
    private final ConcurrentHashMap<Long, Session.Channel> channelsByToken = new ConcurrentHashMap<>();
    /** Doorbell tokens to sessions, for BIND_DOORBELL on a second connection. */
    private final ConcurrentHashMap<Long, Session> doorbellsByToken = new ConcurrentHashMap<>();
    /** Async-event tokens to sessions, for BIND_ASYNC on a second connection. */
    private final ConcurrentHashMap<Long, Session> asyncByToken = new ConcurrentHashMap<>();
    /** Futex wake-ups of applications sleeping in poll_cq. */
    private final AtomicLong futexWakes = new AtomicLong();

    private final SecureRandom random = new SecureRandom();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLongArray succeededByOp = new AtomicLongArray(64);
    /** Doorbell bytes the applications wrote, and the reads that woke a doorbell thread for them. */
    private final AtomicLong doorbellBytes = new AtomicLong();

    private final AtomicLong doorbellWakeups = new AtomicLong();
    /** How registered memory is reached; device thread only. */
    private final MemoryStats.Counters memoryCounters = new MemoryStats.Counters();

    private volatile boolean closed;

    private VnicControlServer(
            final Path socketPath,
            final Device device,
            final Executor deviceExecutor,
            final ServerSocketChannel listener) {
        this.socketPath = socketPath;
        this.device = device;
        this.deviceExecutor = deviceExecutor;
        this.listener = listener;
        this.acceptor = Thread.ofPlatform()
                .name("vrdma-control-" + device.name())
                .daemon(true)
                .unstarted(this::acceptLoop);
    }

    /**
     * Binds {@code socketPath} (which must not exist; its directory is created with owner-only
     * permissions if missing) and starts serving.
     *
     * @param deviceExecutor runs every call into {@code device}: the device's own thread
     */
    public static VnicControlServer start(final Path socketPath, final Device device, final Executor deviceExecutor)
            throws IOException {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(deviceExecutor, "deviceExecutor");
        final Path dir = socketPath.toAbsolutePath().getParent();
        if (dir != null && !Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            dir.toFile().setReadable(false, false);
            dir.toFile().setReadable(true, true);
            dir.toFile().setWritable(false, false);
            dir.toFile().setWritable(true, true);
            dir.toFile().setExecutable(false, false);
            dir.toFile().setExecutable(true, true);
        }
        final ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            listener.bind(UnixDomainSocketAddress.of(socketPath));
        } catch (final IOException e) {
            listener.close();
            throw e;
        }
        final VnicControlServer server = new VnicControlServer(socketPath, device, deviceExecutor, listener);
        server.onDevice(() -> {
            device.asyncEventHandler(server::onAsyncEvent);
            return null;
        });
        server.acceptor.start();
        return server;
    }

    /** The socket path clients connect to ({@code VRDMA_SOCKET}). */
    public Path socketPath() {
        return socketPath;
    }

    public Device device() {
        return device;
    }

    /** Requests served so far, and how many of them failed. */
    public long requests() {
        return requests.get();
    }

    public long errors() {
        return errors.get();
    }

    /** Requests with opcode {@code op} ({@link ControlProtocol}) that succeeded. */
    public long succeeded(final int op) {
        return op >= 0 && op < succeededByOp.length() ? succeededByOp.get(op) : 0;
    }

    /** How the vNIC reached registered memory so far (zero-copy regions, system calls), read on the device thread. */
    public MemoryStats memoryStats() {
        return onDevice(memoryCounters::snapshot);
    }

    /** Doorbells the applications rang (one byte each) since the server started. */
    public long doorbells() {
        return doorbellBytes.get();
    }

    /** Reads of doorbell connections that returned bytes: wake-ups of a doorbell thread. */
    public long doorbellWakeups() {
        return doorbellWakeups.get();
    }

    /** Futex wake-ups the vNIC made for applications sleeping in {@code ibv_poll_cq}. */
    public long futexWakes() {
        return futexWakes.get();
    }

    void onFutexWake() {
        futexWakes.incrementAndGet();
    }

    /** Device thread: routes an event of the model to the application owning its object. */
    private void onAsyncEvent(final AsyncEventType type, final Object source) {
        for (final Session s : sessions) { // port and device events go to every session
            if (s.onAsyncEvent(type, source)) {
                return;
            }
        }
    }

    void onDoorbellRead(final int bytes) {
        doorbellBytes.addAndGet(bytes);
        doorbellWakeups.incrementAndGet();
    }

    MemoryStats.Counters memoryCounters() {
        return memoryCounters;
    }

    /** What each live application holds, read on the device thread. */
    public List<SessionView> sessions() {
        return onDevice(() -> {
            final List<SessionView> views = new ArrayList<>();
            for (final Session s : sessions) {
                views.add(s.view());
            }
            return views;
        });
    }

    /** Stops accepting, closes every connection and releases every application's objects. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // The host goes away: the port goes down and the device is gone, as on a driver's removal;
        // the events leave before the connections close.
        try {
            final List<Session> told = onDevice(() -> {
                for (final Session s : sessions) {
                    s.onAsyncEvent(AsyncEventType.PORT_ERR, Device.PORT_NUM);
                    s.onAsyncEvent(AsyncEventType.DEVICE_FATAL, device);
                }
                return List.copyOf(sessions);
            });
            for (final Session s : told) {
                s.awaitAsyncEventsWritten(200);
            }
        } catch (final RuntimeException e) {
            LOG.log(Level.DEBUG, "telling applications the device goes away", e); // closing regardless
        }
        try {
            listener.close();
        } catch (final IOException e) {
            LOG.log(Level.DEBUG, "closing listener", e);
        }
        for (final Connection c : connections) {
            c.close();
        }
        try {
            acceptor.join(5_000);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        onDevice(() -> {
            device.asyncEventHandler(null);
            for (final Session s : List.copyOf(sessions)) {
                s.release();
            }
            return null;
        });
        onDevice(() -> {
            // A turn after the releases: the frames that still pointed at their mappings have left.
            for (final Session s : sessions) {
                s.closeRetired();
            }
            sessions.clear();
            return null;
        });
        try {
            Files.deleteIfExists(socketPath);
        } catch (final IOException e) {
            LOG.log(Level.DEBUG, "removing socket", e);
        }
    }

    /**
     * What one application holds in the vNIC.
     *
     * @param pid the process named in HELLO
     * @param protectionDomains live PDs
     * @param memoryRegions live MRs (their backings reach the application's memory)
     * @param completionQueues live CQs
     * @param channels live completion channels
     * @param queuePairs live QPs
     */
    public record SessionView(
            int pid,
            int protectionDomains,
            List<MemoryRegion> memoryRegions,
            int completionQueues,
            int channels,
            int queuePairs) {}

    // ---------------------------------------------------------------- internals

    /**
     * Unmaps what {@code s} deregistered, in a device turn of its own: queued after the underlay
     * flushes that the frames built before the deregistration queued (see {@link MemfdMemory}).
     */
    private void closeRetired(final Session s) {
        if (s.hasRetired()) {
            onDevice(() -> {
                s.closeRetired();
                return null;
            });
        }
    }

    /** Runs {@code task} on the device thread and waits for it (bounded). */
    <T> T onDevice(final Supplier<T> task) {
        final CompletableFuture<T> f = CompletableFuture.supplyAsync(task, deviceExecutor);
        try {
            return f.get(DEVICE_CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the device thread", e);
        } catch (final ExecutionException e) {
            throw new IllegalStateException("device call failed", e.getCause());
        } catch (final TimeoutException e) {
            throw new IllegalStateException("device thread did not answer in " + DEVICE_CALL_TIMEOUT_MS + " ms", e);
        }
    }

    long newToken() {
        long t;
        do {
            t = random.nextLong();
        } while (t == 0 || channelsByToken.containsKey(t));
        return t;
    }

    void registerToken(final long token, final Session.Channel channel) {
        channelsByToken.put(token, channel);
    }

    void forgetToken(final long token) {
        channelsByToken.remove(token);
    }

    void registerDoorbell(final long token, final Session session) {
        doorbellsByToken.put(token, session);
    }

    void forgetDoorbell(final long token) {
        doorbellsByToken.remove(token);
    }

    void registerAsync(final long token, final Session session) {
        asyncByToken.put(token, session);
    }

    void forgetAsync(final long token) {
        asyncByToken.remove(token);
    }

    Executor deviceExecutor() {
        return deviceExecutor;
    }

    private void acceptLoop() {
        while (!closed) {
            final SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (final ClosedChannelException e) {
                return;
            } catch (final IOException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "accept failed", e);
                }
                return;
            }
            final Connection c = new Connection(ch);
            connections.add(c);
            Thread.ofVirtual().name("vrdma-conn").start(c::run);
        }
    }

    /** One client socket: an application context, or the event stream of a completion channel. */
    private final class Connection {
        private final SocketChannel ch;
        private final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        private Session session;

        Connection(final SocketChannel ch) {
            this.ch = ch;
        }

        void run() {
            try {
                serve();
            } catch (final IOException e) {
                LOG.log(Level.DEBUG, "connection ended", e);
            } catch (final RuntimeException e) {
                LOG.log(Level.WARNING, "connection failed", e);
            } finally {
                close();
                connections.remove(this);
                final Session s = session;
                if (s != null && !closed) {
                    try {
                        onDevice(() -> {
                            s.release();
                            return null;
                        });
                        // A turn later: the frames that still pointed at its mappings have left.
                        onDevice(() -> {
                            s.closeRetired();
                            sessions.remove(s);
                            return null;
                        });
                    } catch (final RuntimeException e) {
                        LOG.log(Level.WARNING, "cleanup of pid " + s.pid() + " failed", e);
                    }
                }
            }
        }

        void close() {
            try {
                ch.close();
            } catch (final IOException e) {
                LOG.log(Level.DEBUG, "close", e);
            }
        }

        private void serve() throws IOException {
            while (true) {
                header.clear();
                if (!readFully(header)) {
                    return;
                }
                header.flip();
                final int len = header.getInt();
                final int op = header.getShort() & 0xFFFF;
                header.getShort();
                final int seq = header.getInt();
                header.getInt();
                if (len < 0 || len > MAX_BODY) {
                    respond(op, seq, EMSGSIZE, null);
                    return; // the stream cannot be resynchronised
                }
                final ByteBuffer body = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
                if (!readFully(body)) {
                    return;
                }
                body.flip();
                requests.incrementAndGet();
                if (op == BIND_CHANNEL && session == null) {
                    bindChannel(op, seq, body);
                    return;
                }
                if (op == BIND_DOORBELL && session == null) {
                    bindDoorbell(op, seq, body);
                    return;
                }
                if (op == BIND_ASYNC && session == null) {
                    bindAsync(op, seq, body);
                    return;
                }
                Response r;
                if (op == HELLO) {
                    r = hello(body);
                } else if (session == null) {
                    r = Response.error(EPROTO);
                } else {
                    final Session s = session;
                    try {
                        r = onDevice(() -> s.handle(op, body));
                        closeRetired(s);
                    } catch (final IllegalStateException e) {
                        LOG.log(Level.WARNING, "request " + op + " failed", e);
                        r = Response.error(e.getCause() instanceof TimeoutException ? ETIMEDOUT : EIO);
                    }
                }
                if (r.status != 0) {
                    errors.incrementAndGet();
                } else if (op < succeededByOp.length()) {
                    succeededByOp.incrementAndGet(op);
                }
                respond(op, seq, r.status, r.body);
            }
        }

        private Response hello(final ByteBuffer body) {
            if (session != null) {
                return Response.error(EPROTO);
            }
            if (body.remaining() < 16 || body.getInt() != MAGIC) {
                return Response.error(EPROTO);
            }
            final int version = body.getShort() & 0xFFFF;
            body.getShort();
            final int pid = body.getInt();
            if (version != VERSION) {
                return Response.error(EPROTO);
            }
            if (!peerOwns(pid)) {
                return Response.error(EPERM);
            }
            try {
                session = onDevice(() -> {
                    final Session s = new Session(VnicControlServer.this, device, pid);
                    sessions.add(s);
                    return s;
                });
            } catch (final IllegalStateException e) {
                LOG.log(Level.WARNING, "opening a context failed", e);
                return Response.error(EIO);
            }
            final ByteBuffer out = Response.body(8);
            out.putShort((short) VERSION).putShort((short) 0).putInt(0);
            return Response.ok(out);
        }

        /** The pid in HELLO must belong to the peer's user (or the peer is root). */
        private boolean peerOwns(final int pid) {
            if (pid <= 0) {
                return false;
            }
            try {
                final UnixDomainPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
                final String owner =
                        Files.getOwner(Path.of("/proc", Integer.toString(pid))).getName();
                return peer.user().getName().equals("root")
                        || peer.user().getName().equals(owner);
            } catch (final IOException | UnsupportedOperationException e) {
                return false;
            }
        }

        /** Turns this connection into the event stream of one completion channel. */
        private void bindChannel(final int op, final int seq, final ByteBuffer body) throws IOException {
            if (body.remaining() < 16) {
                respond(op, seq, EINVAL, null);
                return;
            }
            final int handle = body.getInt();
            body.getInt();
            final long token = body.getLong();
            final Session.Channel channel = token == 0 ? null : channelsByToken.remove(token);
            if (channel == null || channel.handle != handle) {
                errors.incrementAndGet();
                respond(op, seq, EINVAL, null);
                return;
            }
            respond(op, seq, 0, null);
            // A platform thread parked on the event queue, as for the doorbell: a virtual thread
            // also needs a carrier thread (and its wake-up) for every event it writes.
            final Thread writer = Thread.ofPlatform()
                    .daemon(true)
                    .name("vrdma-channel-" + handle)
                    .start(() -> {
                        try {
                            channel.streamEvents(ch);
                        } catch (final IOException e) {
                            LOG.log(Level.DEBUG, "channel connection ended", e);
                        }
                    });
            try {
                writer.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Turns this connection into the doorbell of one application context. */
        private void bindDoorbell(final int op, final int seq, final ByteBuffer body) throws IOException {
            final long token = body.remaining() >= 8 ? body.getLong() : 0;
            final Session s = token == 0 ? null : doorbellsByToken.remove(token);
            if (s == null) {
                errors.incrementAndGet();
                respond(op, seq, EINVAL, null);
                return;
            }
            respond(op, seq, 0, null);
            // A platform thread blocked in read(2): one wake-up per doorbell, where a virtual thread
            // also needs the JDK's poller thread and a carrier thread (ib_send_lat's typical
            // latency: median of six runs about 125 us against about 195 us).
            final Thread reader = Thread.ofPlatform()
                    .daemon(true)
                    .name("vrdma-doorbell-" + s.pid())
                    .start(() -> {
                        try {
                            s.streamDoorbells(ch);
                        } catch (final IOException e) {
                            LOG.log(Level.DEBUG, "doorbell connection ended", e);
                        }
                    });
            try {
                reader.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Turns this connection into the async_fd of one application context. */
        private void bindAsync(final int op, final int seq, final ByteBuffer body) throws IOException {
            final long token = body.remaining() >= 8 ? body.getLong() : 0;
            final Session s = token == 0 ? null : asyncByToken.remove(token);
            if (s == null) {
                errors.incrementAndGet();
                respond(op, seq, EINVAL, null);
                return;
            }
            respond(op, seq, 0, null);
            s.streamAsyncEvents(ch);
        }

        private boolean readFully(final ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    if (b.position() == 0 && b == header) {
                        return false;
                    }
                    throw new IOException("connection closed mid-message");
                }
            }
            return true;
        }

        private void respond(final int op, final int seq, final int status, final ByteBuffer body) throws IOException {
            final int len = body == null ? 0 : body.remaining();
            final ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + len).order(ByteOrder.LITTLE_ENDIAN);
            out.putInt(len).putShort((short) op).putShort((short) 0).putInt(seq).putInt(status);
            if (body != null) {
                out.put(body);
            }
            out.flip();
            while (out.hasRemaining()) {
                ch.write(out);
            }
        }
    }

    /** A response: status 0 with a body, or an errno. */
    record Response(int status, ByteBuffer body) {
        static Response ok(final ByteBuffer body) {
            return new Response(0, body == null ? null : body.flip());
        }

        static Response ok() {
            return new Response(0, null);
        }

        static Response error(final int errno) {
            return new Response(errno, null);
        }

        static ByteBuffer body(final int size) {
            return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        }

        static void putString(final ByteBuffer b, final String s, final int width) {
            final byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
            final int n = Math.min(bytes.length, width - 1);
            b.put(bytes, 0, n);
            for (int i = n; i < width; i++) {
                b.put((byte) 0);
            }
        }
    }
}
