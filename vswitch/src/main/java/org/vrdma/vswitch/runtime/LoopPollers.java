package org.vrdma.vswitch.runtime;

import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * The sockets an event loop's thread can read directly, without asking epoll first: a busy-polling
 * loop ({@link SpinThenBlockStrategy}) calls them while it spins, so a datagram is read by the next
 * poll with one system call instead of an {@code epoll_wait} followed by the reads. Each poller
 * reads until its socket is empty and returns the datagrams it read.
 *
 * <p>One instance per thread ({@link #current()}); add and remove pollers on the loop they belong
 * to. Not thread-safe.
 */
public final class LoopPollers {
    private static final ThreadLocal<LoopPollers> CURRENT = ThreadLocal.withInitial(LoopPollers::new);

    private IntSupplier[] pollers = new IntSupplier[0];

    /** The calling thread's pollers. */
    public static LoopPollers current() {
        return CURRENT.get();
    }

    public void add(IntSupplier poller) {
        pollers = Arrays.copyOf(pollers, pollers.length + 1);
        pollers[pollers.length - 1] = poller;
    }

    public void remove(IntSupplier poller) {
        for (int i = 0; i < pollers.length; i++) {
            if (pollers[i] == poller) {
                IntSupplier[] rest = new IntSupplier[pollers.length - 1];
                System.arraycopy(pollers, 0, rest, 0, i);
                System.arraycopy(pollers, i + 1, rest, i, pollers.length - i - 1);
                pollers = rest;
                return;
            }
        }
    }

    public boolean isEmpty() {
        return pollers.length == 0;
    }

    /** Polls every socket once; returns the datagrams read. */
    public int pollAll() {
        int read = 0;
        for (IntSupplier p : pollers) {
            read += p.getAsInt();
        }
        return read;
    }
}
