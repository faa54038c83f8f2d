package org.vrdma.shim;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.vrdma.vnic.verbs.Errno;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * A ring shared between an application and the vNIC: the application's sealed memfd, mapped by
 * {@link Memfd} on both sides. The vNIC maps an application's ring with {@code map}; a JVM
 * application creates its own with {@link #create} (the Java verbs API attached to a vNIC process).
 * Counters are read with acquire and written with release semantics, matching the library's {@code
 * __atomic} accesses. Closing the ring invalidates the segment before it is unmapped, so a late
 * access throws instead of touching unmapped memory.
 */
public final class SharedRing implements AutoCloseable {
    /** Plain fields of slots may sit at any offset; counters are 4-byte aligned. */
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_HANDLE =
            JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    /** {@code long syscall(long number, ...)}: every argument passed as a long. */
    private static final MethodHandle SYSCALL = Linker.nativeLinker()
            .downcallHandle(
                    Linker.nativeLinker().defaultLookup().find("syscall").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                    Linker.Option.firstVariadicArg(1));

    private static final long SYS_FUTEX = 202; // x86-64
    /** FUTEX_WAKE without FUTEX_PRIVATE_FLAG: the waiter is another process sharing the memfd. */
    private static final long FUTEX_WAKE = 1;

    private final Arena arena;
    private final MemorySegment segment;
    /** The application side's descriptor until the vNIC has mapped the ring; -1 after. */
    private int fd = -1;

    private SharedRing(final Arena arena, final MemorySegment segment) {
        this.arena = arena;
        this.segment = segment;
    }

    /**
     * Creates a ring of at least {@code minBytes} bytes (rounded up to whole pages) in this process:
     * a sealed memfd named {@code name}, zero-filled and mapped shared. Send {@link #fd()} in the
     * CREATE request, then {@link #closeDescriptor()}.
     *
     * @throws VerbsException ENOMEM when no memfd can be made
     */
    public static SharedRing create(final String name, final long minBytes) {
        final Arena arena = Arena.ofShared();
        try {
            final long bytes = (minBytes + Memfd.PAGE_BYTES - 1) / Memfd.PAGE_BYTES * Memfd.PAGE_BYTES;
            final Memfd.Created created = Memfd.create(name, bytes, arena);
            final SharedRing ring = new SharedRing(arena, created.segment());
            ring.fd = created.fd();
            return ring;
        } catch (final RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** The descriptor number of a ring made by {@link #create}, for the vNIC to open; -1 once closed. */
    public int fd() {
        return fd;
    }

    /** Closes the descriptor of a ring made by {@link #create}; both mappings keep the memory. */
    public void closeDescriptor() {
        if (fd >= 0) {
            Memfd.closeDescriptor(fd);
            fd = -1;
        }
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
        final Arena arena = Arena.ofShared();
        try {
            return new SharedRing(arena, Memfd.map(pid, fd, 0, minBytes, arena));
        } catch (final RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Bytes mapped. */
    public long bytes() {
        return segment.byteSize();
    }

    /** A counter, read with acquire semantics. */
    public int getIntAcquire(final long offset) {
        return (int) INT_HANDLE.getAcquire(segment, offset);
    }

    /** Publishes a counter with release semantics, after the slots it covers. */
    public void setIntRelease(final long offset, final int value) {
        INT_HANDLE.setRelease(segment, offset, value);
    }

    /** Writes an int with volatile (sequentially consistent) semantics. */
    public void setIntVolatile(final long offset, final int value) {
        INT_HANDLE.setVolatile(segment, offset, value);
    }

    /** A little-endian int of a slot. */
    public int getInt(final long offset) {
        return segment.get(INT, offset);
    }

    /** A little-endian long of a slot. */
    public long getLong(final long offset) {
        return segment.get(LONG, offset);
    }

    /** Writes a little-endian int of a slot. */
    public void putInt(final long offset, final int value) {
        segment.set(INT, offset, value);
    }

    /** Writes a little-endian long of a slot. */
    public void putLong(final long offset, final long value) {
        segment.set(LONG, offset, value);
    }

    /** Writes a little-endian short of a slot. */
    public void putShort(final long offset, final short value) {
        segment.set(SHORT, offset, value);
    }

    /** Writes a byte of a slot. */
    public void putByte(final long offset, final byte value) {
        segment.set(ValueLayout.JAVA_BYTE, offset, value);
    }

    /** Wakes every thread of the application sleeping on the futex word at {@code offset}. */
    void wakeFutex(final long offset) {
        try {
            final long r = (long)
                    SYSCALL.invokeExact(SYS_FUTEX, segment.address() + offset, FUTEX_WAKE, (long) Integer.MAX_VALUE);
            if (r < 0) {
                throw new VerbsException(Errno.EFAULT, "futex wake failed");
            }
        } catch (final VerbsException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException("futex wake", t);
        }
    }

    /** Copies {@code len} bytes from {@code offset} into {@code dst}. */
    public void getBytes(final long offset, final byte[] dst, final int len) {
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, dst, 0, len);
    }

    /** Atomically replaces the int at {@code offset} (sequentially consistent) and returns the old value. */
    public int getAndSetInt(final long offset, final int value) {
        return (int) INT_HANDLE.getAndSet(segment, offset, value);
    }

    /** Copies {@code len} bytes of {@code src} from {@code srcOffset} to {@code offset}. */
    public void putBytes(final long offset, final MemorySegment src, final long srcOffset, final long len) {
        MemorySegment.copy(src, srcOffset, segment, offset, len);
    }

    /** Unmaps the ring (and closes a descriptor still open). */
    @Override
    public void close() {
        closeDescriptor();
        arena.close();
    }
}
