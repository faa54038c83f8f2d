package org.vrdma.verbs;

import io.netty.channel.EventLoop;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.vrdma.vnic.verbs.VerbsException;

/**
 * The hand-off from application threads to the one event loop a vNIC is confined to: control calls
 * run there and the caller waits for the result; the vNIC's errors come back as typed exceptions.
 */
final class HostLoop {
    private static final long CALL_TIMEOUT_SECONDS = 30;

    final EventLoop loop;

    HostLoop(EventLoop loop) {
        this.loop = loop;
    }

    boolean inLoop() {
        return loop.inEventLoop();
    }

    /** Runs {@code action} on the loop (directly when already there) and returns its result. */
    <T> T call(Supplier<T> action) {
        if (loop.inEventLoop()) {
            return translated(action);
        }
        Future<T> f;
        try {
            f = loop.submit(() -> translated(action));
        } catch (RejectedExecutionException e) {
            throw new IbvIoException("the device's host is closed");
        }
        try {
            return f.get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the device", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "the device's event loop did not answer in " + CALL_TIMEOUT_SECONDS + " s", e);
        }
    }

    /** Runs {@code action} on the loop (directly when already there) and waits for it to finish. */
    void run(Runnable action) {
        call(() -> {
            action.run();
            return null;
        });
    }

    /**
     * The idempotent {@code close()} of a verbs object: runs {@code destroy} on the loop unless
     * {@code live} already says no. {@code live} is asked again on the loop because another thread may
     * have destroyed the object in between.
     */
    void closeIfLive(BooleanSupplier live, Runnable destroy) {
        if (live.getAsBoolean()) {
            run(() -> {
                if (live.getAsBoolean()) {
                    destroy.run();
                }
            });
        }
    }

    /** Runs {@code action} on the loop without waiting (posting; wake-ups). */
    void execute(Runnable action) {
        try {
            loop.execute(action);
        } catch (RejectedExecutionException e) {
            throw new IbvIoException("the device's host is closed");
        }
    }

    private static <T> T translated(Supplier<T> action) {
        try {
            return action.get();
        } catch (VerbsException e) {
            throw IbvException.of(e);
        }
    }
}
