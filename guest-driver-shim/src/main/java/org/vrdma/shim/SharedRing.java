package org.vrdma.shim;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A ring shared with an application: the application's sealed memfd, opened by the vNIC as {@code
 * /proc/<pid>/fd/<n>} and mapped {@code MAP_SHARED} through the FFM API (Java's Unix-domain sockets
 * cannot receive descriptors with {@code SCM_RIGHTS}). Counters are read with acquire and written
 * with release semantics, matching the library's {@code __atomic} accesses.
 *
 * <p>Only a memfd sealed against shrinking and growing is accepted: a file the application could
 * truncate would make the vNIC's accesses fault, and any other file (reopened with the vNIC's
 * rights) is refused. Closing the ring invalidates the segment before it is unmapped, so a late
 * access throws instead of touching unmapped memory.
 */
final class SharedRing implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle OPEN = function(
            "open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    private static final MethodHandle FCNTL =
            function("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle LSEEK =
            function("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle MMAP = function(
            "mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = function("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int F_GET_SEALS = 1034;
    private static final int F_SEAL_SHRINK = 2;
    private static final int F_SEAL_GROW = 4;
    private static final int SEEK_END = 2;
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_SHARED = 1;

    /** Plain fields of slots may sit at any offset; counters are 4-byte aligned. */
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_HANDLE =
            JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private final Arena arena;
    private final MemorySegment segment;

    private SharedRing(final Arena arena, final MemorySegment segment) {
        this.arena = arena;
        this.segment = segment;
    }

    private static MethodHandle function(
            final String name, final FunctionDescriptor descriptor, final Linker.Option... options) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor, options);
    }

    /**
     * Maps descriptor {@code fd} of process {@code pid}, which must be a sealed memfd of at least
     * {@code minBytes} bytes.
     *
     * @throws VerbsException EINVAL (not a sealed memfd, too small), EPERM/EFAULT (cannot be opened)
     */
    static SharedRing map(final int pid, final int fd, final long minBytes) {
        if (fd < 0 || minBytes <= 0) {
            throw new VerbsException(Errno.EINVAL, "no ring descriptor");
        }
        final Path link = Path.of("/proc", Integer.toString(pid), "fd", Integer.toString(fd));
        try {
            final String target = Files.readSymbolicLink(link).toString();
            if (!target.startsWith("/memfd:")) {
                throw new VerbsException(Errno.EINVAL, "ring descriptor " + fd + " is not a memfd: " + target);
            }
        } catch (final java.io.IOException e) {
            throw new VerbsException(Errno.EPERM, "cannot inspect " + link + ": " + e.getMessage());
        }
        try (Arena tmp = Arena.ofConfined()) {
            final MemorySegment state = tmp.allocate(CALL_STATE);
            final int local = (int) OPEN.invokeExact(state, tmp.allocateFrom(link.toString()), O_RDWR | O_CLOEXEC);
            if (local < 0) {
                final int errno = (int) ERRNO.get(state, 0L);
                throw new VerbsException(
                        errno == 1 || errno == 13 ? Errno.EPERM : Errno.EINVAL,
                        "cannot open " + link + " (errno " + errno + ")");
            }
            try {
                final int seals = (int) FCNTL.invokeExact(local, F_GET_SEALS);
                if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
                    throw new VerbsException(Errno.EINVAL, "ring memfd is not sealed against resizing");
                }
                final long size = (long) LSEEK.invokeExact(local, 0L, SEEK_END);
                if (size < minBytes) {
                    throw new VerbsException(Errno.EINVAL, "ring of " + size + " bytes, " + minBytes + " needed");
                }
                final MemorySegment addr = (MemorySegment)
                        MMAP.invokeExact(MemorySegment.NULL, minBytes, PROT_READ_WRITE, MAP_SHARED, local, 0L);
                if (addr.address() == -1L) {
                    throw new VerbsException(Errno.ENOMEM, "cannot map the ring");
                }
                final Arena arena = Arena.ofShared();
                final MemorySegment segment = addr.reinterpret(minBytes, arena, s -> unmap(s, minBytes));
                return new SharedRing(arena, segment);
            } finally {
                final int ignored = (int) CLOSE.invokeExact(local);
            }
        } catch (final VerbsException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("mapping a shared ring failed", t);
        }
    }

    private static void unmap(final MemorySegment s, final long bytes) {
        try {
            final int ignored = (int) MUNMAP.invokeExact(MemorySegment.ofAddress(s.address()), bytes);
        } catch (final Throwable t) {
            throw new IllegalStateException("munmap failed", t);
        }
    }

    long bytes() {
        return segment.byteSize();
    }

    int getIntAcquire(final long offset) {
        return (int) INT_HANDLE.getAcquire(segment, offset);
    }

    void setIntRelease(final long offset, final int value) {
        INT_HANDLE.setRelease(segment, offset, value);
    }

    void setIntVolatile(final long offset, final int value) {
        INT_HANDLE.setVolatile(segment, offset, value);
    }

    int getInt(final long offset) {
        return segment.get(INT, offset);
    }

    long getLong(final long offset) {
        return segment.get(LONG, offset);
    }

    void putInt(final long offset, final int value) {
        segment.set(INT, offset, value);
    }

    void putLong(final long offset, final long value) {
        segment.set(LONG, offset, value);
    }

    void putShort(final long offset, final short value) {
        segment.set(SHORT, offset, value);
    }

    void putByte(final long offset, final byte value) {
        segment.set(ValueLayout.JAVA_BYTE, offset, value);
    }

    void getBytes(final long offset, final byte[] dst, final int len) {
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, dst, 0, len);
    }

    @Override
    public void close() {
        arena.close();
    }
}
