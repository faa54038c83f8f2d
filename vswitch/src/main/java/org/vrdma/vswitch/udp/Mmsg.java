package org.vrdma.vswitch.udp;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The Linux ABI that {@link DatagramSender} and {@link DatagramReceiver} call through FFM: the
 * layout of {@code struct mmsghdr} and {@code struct iovec} on LP64, the socket constants both use,
 * and the {@code errno} of a call.
 *
 * <p>A downcall linked with {@code captureCallState("errno")} slices its capture segment on every
 * call, an object the JIT removes only when the whole call inlines. The calls made per packet are
 * therefore linked without it: a refused {@code sendmmsg} is made again through a handle that
 * captures, and {@code recvmmsg}, critical, reads {@code errno} with {@link #errno()} when it
 * returns -1.
 */
final class Mmsg {
    static final int EAGAIN = 11;
    static final int EINTR = 4;
    static final int AF_INET = 2;
    static final int SOL_UDP = 17;

    // struct mmsghdr on LP64 Linux: msghdr (56 bytes) + msg_len, padded to 64.
    static final int MMSG_BYTES = 64;
    static final int NAME = 0;
    static final int NAME_LEN = 8;
    static final int IOV = 16;
    static final int IOV_LEN = 24;
    static final int CONTROL = 32;
    static final int CONTROL_LEN = 40;
    static final int FLAGS = 48;
    static final int MSG_LEN = 56;
    static final int IOVEC_BYTES = 16;

    /** Network byte order, for the port and address of a {@code sockaddr_in}. */
    static final ValueLayout.OfInt INT_BE = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

    static final ValueLayout.OfShort SHORT_BE = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

    /** What a downcall linked with {@code captureCallState("errno")} fills (calls off the per-packet path). */
    static final StructLayout CAPTURE = Linker.Option.captureStateLayout();

    /** The {@code errno} in a {@link #CAPTURE} segment: {@code (int) ERRNO.get(segment, 0L)}. */
    static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();

    /** All of the address space, to reach native addresses without a segment object per access. */
    static final MemorySegment EVERYWHERE;

    /**
     * {@code int *__errno_location(void)} (glibc and musl), critical: the address comes back as a
     * long (no segment object). Critical calls leave the thread in Java state: their return runs no
     * transition from native (where a safepoint or handshake may be processed and reuse {@code
     * errno}) before the read.
     */
    private static final MethodHandle ERRNO_LOCATION;

    /** Why the above could not be linked (no native access), or null. */
    static final Throwable UNAVAILABLE;

    static {
        MemorySegment everywhere = null;
        MethodHandle errnoLocation = null;
        Throwable unavailable = null;
        try {
            everywhere = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
            Linker linker = Linker.nativeLinker();
            errnoLocation = linker.downcallHandle(
                    linker.defaultLookup().find("__errno_location").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG),
                    Linker.Option.critical(false));
        } catch (Throwable t) {
            unavailable = t;
        }
        EVERYWHERE = everywhere;
        ERRNO_LOCATION = errnoLocation;
        UNAVAILABLE = unavailable;
        if (unavailable == null) {
            // Links the read now: linking it at its first use (class loading, generated method handle
            // forms) would run between a failed call and the read, and may set errno itself.
            errno();
        }
    }

    /**
     * The calling thread's {@code errno}: call right after a downcall linked with {@link
     * Linker.Option#critical critical} returned -1, before anything else that may set it.
     */
    static int errno() {
        long location;
        try {
            location = (long) ERRNO_LOCATION.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("__errno_location", t);
        }
        return EVERYWHERE.get(JAVA_INT, location);
    }

    private Mmsg() {}
}
