package org.vrdma.vswitch.udp;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import org.junit.jupiter.api.Test;

/** {@link Mmsg#errno()} reads the errno a critical call just left, per failure and per thread. */
class MmsgTest {
    private static final int EBADF = 9;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_NONBLOCK = 04000;
    private static final int MSG_DONTWAIT = 0x40;

    private static final Linker LINKER = Linker.nativeLinker();

    private static MethodHandle critical(String name, FunctionDescriptor signature) {
        return LINKER.downcallHandle(
                LINKER.defaultLookup().find(name).orElseThrow(), signature, Linker.Option.critical(false));
    }

    @Test
    void errnoOfTheFailedCallJustMade() throws Throwable {
        assertThat(Mmsg.UNAVAILABLE).isNull();
        MethodHandle close = critical("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MethodHandle socket = critical("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle recvmmsg =
                critical("recvmmsg", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG));

        // Each result is kept before asserting: the assertions themselves may set errno.
        int closed = (int) close.invokeExact(-1);
        int closeErrno = Mmsg.errno();
        assertThat(closed).isEqualTo(-1);
        assertThat(closeErrno).isEqualTo(EBADF);

        int fd = (int) socket.invokeExact(Mmsg.AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        assertThat(fd).isNotNegative();
        try (Arena arena = Arena.ofConfined()) {
            var msgs = arena.allocate(Mmsg.MMSG_BYTES, 8);
            // An unbound, empty socket: nothing to read.
            assertThat((int) recvmmsg.invokeExact(fd, msgs, 1, MSG_DONTWAIT, 0L))
                    .isEqualTo(-1);
            assertThat(Mmsg.errno()).isEqualTo(Mmsg.EAGAIN);
            // errno is the thread's own: another thread's failure does not change it.
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    int rc = (int) close.invokeExact(-1);
                    assertThat(rc).isEqualTo(-1);
                } catch (Throwable t) {
                    throw new AssertionError(t);
                }
            });
            other.join();
            assertThat(Mmsg.errno()).isEqualTo(Mmsg.EAGAIN);
        } finally {
            assertThat((int) close.invokeExact(fd)).isZero();
        }
    }
}
