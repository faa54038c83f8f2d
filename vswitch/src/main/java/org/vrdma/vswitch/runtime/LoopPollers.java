package org.vrdma.vswitch.runtime;

import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * The sockets an event loop's thread can read directly, without asking epoll first: a busy-polling
 * loop ({@link SpinThenBlockStrategy}) calls them while it spins, so a datagram is read by the next
 * poll with one system call instead of an {@code epoll_wait} followed by the reads. Each poller
 * reads until its socket is empty and returns the datagrams it read.
 *
 * <p>It also holds each socket's probe of its queued input ({@link #inputQueued()}): a diagnostic
 * that tells whether timers fire while input waits to be read.
 *
 * <p>One instance per thread ({@link #current()}); add and remove pollers on the loop they belong
 * to. Not thread-safe.
 */
public final class LoopPollers {
    private static final ThreadLocal<LoopPollers> CURRENT = ThreadLocal.withInitial(LoopPollers::new);

    private IntSupplier[] pollers = new IntSupplier[0];
    private IntSupplier[] inputProbes = new IntSupplier[0];

    /** The calling thread's pollers. */
    public static LoopPollers current() {
        return CURRENT.get();
    }

    public void add(IntSupplier poller) {
        pollers = with(pollers, poller);
    }

    public void remove(IntSupplier poller) {
        pollers = without(pollers, poller);
    }

    /** Adds a socket's probe: the bytes waiting in it (0 when empty). */
    public void addInputProbe(IntSupplier queuedBytes) {
        inputProbes = with(inputProbes, queuedBytes);
    }

    public void removeInputProbe(IntSupplier queuedBytes) {
        inputProbes = without(inputProbes, queuedBytes);
    }

    /** Whether any socket with a probe holds input not read yet. */
    public boolean inputQueued() {
        for (IntSupplier p : inputProbes) {
            if (p.getAsInt() > 0) {
                return true;
            }
        }
        return false;
    }

    private static IntSupplier[] with(IntSupplier[] all, IntSupplier one) {
        IntSupplier[] more = Arrays.copyOf(all, all.length + 1);
        more[all.length] = one;
        return more;
    }

    private static IntSupplier[] without(IntSupplier[] all, IntSupplier one) {
        for (int i = 0; i < all.length; i++) {
            if (all[i] == one) {
                IntSupplier[] rest = new IntSupplier[all.length - 1];
                System.arraycopy(all, 0, rest, 0, i);
                System.arraycopy(all, i + 1, rest, i, all.length - i - 1);
                return rest;
            }
        }
        return all;
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
