package org.vrdma.vswitch.tap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * A Linux TAP device opened through {@code /dev/net/tun} with the Java FFM API: {@code open},
 * {@code ioctl(TUNSETIFF)} with {@code IFF_TAP | IFF_NO_PI} (whole Ethernet frames, no packet-info
 * prefix), non-blocking {@code read}/{@code write} and {@code poll}. The device lives in the network
 * namespace of the process that opens it and disappears when its descriptor is closed.
 *
 * <p>Reads and writes take raw native addresses (a direct buffer's memory) so the hot path passes
 * no Java objects to the kernel. Each thread that reads or writes uses its own {@link Errno} (the
 * captured {@code errno}), so the device is safe for one reader thread plus one writer thread.
 */
public final class TapDevice implements AutoCloseable {
    private static final int O_RDWR = 2;
    private static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final long TUNSETIFF = 0x400454caL;
    private static final short IFF_TAP = 0x0002;
    private static final short IFF_NO_PI = 0x1000;
    private static final int IFNAMSIZ = 16;
    private static final int IFREQ_BYTES = 40;
    private static final short POLLIN = 0x0001;
    /** errno of a non-blocking read with nothing to read. */
    public static final int EAGAIN = 11;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle OPEN = downcall("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle IOCTL = LINKER.downcallHandle(
            LINKER.defaultLookup().find("ioctl").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
            CAPTURE_ERRNO,
            Linker.Option.firstVariadicArg(2));
    // Buffers are passed as raw addresses (a pointer is a 64-bit integer argument on LP64 Linux).
    private static final MethodHandle READ =
            downcall("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle WRITE =
            downcall("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle POLL =
            downcall("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle CLOSE = downcall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(
            LINKER.defaultLookup().find("strerror").orElseThrow(), FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private static MethodHandle downcall(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor, CAPTURE_ERRNO);
    }

    /**
     * State of the system calls of one thread at a time: the captured errno and a pollfd. Native
     * memory of a shared arena, so it may be made on one thread and used on another.
     */
    public static final class Errno implements AutoCloseable {
        private final Arena arena = Arena.ofShared();
        final MemorySegment state = arena.allocate(CAPTURE);
        final MemorySegment pollFd = arena.allocate(8, 4);

        /** errno of the last failed call made with this holder. */
        public int value() {
            return (int) ERRNO.get(state, 0L);
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    private final int fd;
    private final String name;
    private volatile boolean closed;

    private TapDevice(int fd, String name) {
        this.fd = fd;
        this.name = name;
    }

    /**
     * Creates (or attaches to) TAP device {@code name} in this process's network namespace.
     *
     * @param name up to 15 characters; empty lets the kernel pick {@code tapN}
     * @throws IOException when {@code /dev/net/tun} cannot be opened or the device not created
     *     (e.g. without CAP_NET_ADMIN)
     */
    public static TapDevice open(String name) throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.US_ASCII);
        if (nameBytes.length >= IFNAMSIZ) {
            throw new IllegalArgumentException("interface name longer than 15 characters: " + name);
        }
        try (Arena arena = Arena.ofConfined();
                Errno errno = new Errno()) {
            int fd = (int)
                    OPEN.invokeExact(errno.state, arena.allocateFrom("/dev/net/tun"), O_RDWR | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) {
                throw new IOException("open /dev/net/tun: " + strerror(errno.value()));
            }
            MemorySegment ifreq = arena.allocate(IFREQ_BYTES);
            MemorySegment.copy(MemorySegment.ofArray(nameBytes), 0, ifreq, 0, nameBytes.length);
            ifreq.set(JAVA_SHORT, IFNAMSIZ, (short) (IFF_TAP | IFF_NO_PI));
            int rc = (int) IOCTL.invokeExact(errno.state, fd, TUNSETIFF, ifreq);
            if (rc < 0) {
                int e = errno.value();
                int ignored = (int) CLOSE.invokeExact(errno.state, fd);
                throw new IOException("ioctl(TUNSETIFF) for TAP " + name + ": " + strerror(e));
            }
            String actual = ifreq.getString(0, StandardCharsets.US_ASCII);
            return new TapDevice(fd, actual);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The interface name the kernel gave the device. */
    public String name() {
        return name;
    }

    /**
     * Reads one frame into native memory at {@code address}.
     *
     * @return its length, or -1 with {@code errno} set ({@link #EAGAIN}: nothing to read)
     */
    public long read(Errno errno, long address, long capacityBytes) {
        try {
            return (long) READ.invokeExact(errno.state, fd, address, capacityBytes);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Writes one frame from native memory: the kernel receives it as if it had arrived on the
     * interface.
     *
     * @return bytes written, or -1 with {@code errno} set
     */
    public long write(Errno errno, long address, long lengthBytes) {
        try {
            return (long) WRITE.invokeExact(errno.state, fd, address, lengthBytes);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Waits until a frame can be read or {@code timeoutMs} passes.
     *
     * @return true when readable
     */
    public boolean pollReadable(Errno errno, int timeoutMs) {
        MemorySegment p = errno.pollFd;
        p.set(JAVA_INT, 0, fd);
        p.set(JAVA_SHORT, 4, POLLIN);
        p.set(JAVA_SHORT, 6, (short) 0);
        try {
            int n = (int) POLL.invokeExact(errno.state, p, 1L, timeoutMs);
            return n > 0 && (p.get(JAVA_SHORT, 6) & POLLIN) != 0;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** Closes the descriptor; the kernel removes the interface. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try (Errno errno = new Errno()) {
            int ignored = (int) CLOSE.invokeExact(errno.state, fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The C library's message for an errno value. */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.reinterpret(256).getString(0) + " (errno " + errno + ")";
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }
}
