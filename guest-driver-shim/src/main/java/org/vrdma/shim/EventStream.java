package org.vrdma.shim;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * Events the device thread queues for an application and the connection that carries them, one
 * fixed-size record each: a completion channel's CQ cookies, a context's asynchronous events. The
 * device thread offers; the connection's own thread writes. An application that does not read
 * loses the events beyond the queue's capacity, counted, and never blocks the device thread.
 *
 * @param <E> the queued event
 */
final class EventStream<E> {
    private final BlockingQueue<E> events;
    private final int recordBytes;
    private final BiConsumer<E, ByteBuffer> encoder;
    private volatile boolean live = true;
    private volatile SocketChannel stream;
    /** Events lost because the application did not read them; device thread only. */
    private long dropped;
    /** Events queued (device thread) and written (connection thread), for {@link #awaitEmpty}. */
    private volatile long queued;

    private volatile long written;

    /**
     * @param capacity events buffered for an application that does not read them
     * @param recordBytes the size of one record on the connection
     * @param encoder writes one event as a little-endian record of {@code recordBytes}
     */
    EventStream(final int capacity, final int recordBytes, final BiConsumer<E, ByteBuffer> encoder) {
        this.events = new ArrayBlockingQueue<>(capacity);
        this.recordBytes = recordBytes;
        this.encoder = encoder;
    }

    /** Device thread: queues one event, or counts it as dropped when the queue is full. */
    void offer(final E event) {
        if (events.offer(event)) {
            queued++; // one writer: the device thread
        } else {
            dropped++;
        }
    }

    /** Waits up to {@code timeoutMs} until the connection's thread has taken every queued event. */
    void awaitEmpty(final long timeoutMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (live && stream != null && written < queued && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    long dropped() {
        return dropped;
    }

    /** Drops the queued events {@code unwanted} matches (not yet written). */
    void forget(final Predicate<E> unwanted) {
        final int[] removed = {0};
        events.removeIf(e -> unwanted.test(e) && ++removed[0] > 0);
        queued -= removed[0]; // device thread, like offer
    }

    /** Connection thread: writes events until {@link #shutdown} or the peer goes away. */
    void stream(final SocketChannel ch) throws IOException {
        stream = ch;
        final ByteBuffer out = ByteBuffer.allocate(recordBytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (live && ch.isOpen()) {
                final E e;
                try {
                    e = events.poll(200, TimeUnit.MILLISECONDS);
                } catch (final InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (e == null) {
                    continue;
                }
                out.clear();
                encoder.accept(e, out);
                out.flip();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
                written++; // one writer: this thread
            }
        } finally {
            ch.close();
        }
    }

    /** Stops streaming and closes the connection, if there is one. */
    void shutdown() {
        live = false;
        final SocketChannel s = stream;
        if (s != null) {
            try {
                s.close();
            } catch (final IOException e) {
                // closing anyway: the peer sees the end of its stream
            }
        }
    }
}
