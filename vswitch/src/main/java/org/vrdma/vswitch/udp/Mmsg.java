package org.vrdma.vswitch.udp;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The Linux ABI that {@link DatagramSender} and {@link DatagramReceiver} call through FFM: the
 * layout of {@code struct mmsghdr} and {@code struct iovec} on LP64, the socket constants both use,
 * and the {@code errno} a downcall captured.
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

    /** What a downcall linked with {@code captureCallState("errno")} fills. */
    static final StructLayout CAPTURE = Linker.Option.captureStateLayout();

    /** The {@code errno} in a {@link #CAPTURE} segment: {@code (int) ERRNO.get(segment, 0L)}. */
    static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno")).withInvokeExactBehavior();

    private Mmsg() {}
}
