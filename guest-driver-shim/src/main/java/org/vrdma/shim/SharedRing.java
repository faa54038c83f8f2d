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
 * A ring shared with an application: the application's sealed memfd, mapped by {@link Memfd}.
 * Counters are read with acquire and written with release semantics, matching the library's {@code
 * __atomic} accesses. Closing the ring invalidates the segment before it is unmapped, so a late
 * access throws instead of touching unmapped memory.
 */
final class SharedRing implements AutoCloseable {
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

    private SharedRing(final Arena arena, final MemorySegment segment) {
        this.arena = arena;
        this.segment = segment;
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

    void getBytes(final long offset, final byte[] dst, final int len) {
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, dst, 0, len);
    }

    @Override
    public void close() {
        arena.close();
    }
}
