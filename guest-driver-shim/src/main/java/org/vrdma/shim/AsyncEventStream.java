package org.vrdma.shim;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.vrdma.vnic.verbs.AsyncEventType;

/**
 * The asynchronous events of one application context ({@code ibv_get_async_event}) and the
 * connection they go out on, which the library hands to the application as the context's {@code
 * async_fd}. The device thread queues events; the connection's thread writes them, one {@code
 * struct vr_async_event} (16 bytes) each.
 */
final class AsyncEventStream {
    /** Events buffered for an application that does not read them; more are dropped and counted. */
    private static final int QUEUE = 1024;

    /** {@code struct vr_async_event.kind}. */
    static final int KIND_QP = 1;

    static final int KIND_CQ = 2;
    static final int KIND_SRQ = 3;
    static final int KIND_PORT = 4;
    static final int KIND_DEVICE = 5;

    private record Event(int type, int kind, int handle) {}

    private final BlockingQueue<Event> events = new ArrayBlockingQueue<>(QUEUE);
    private volatile boolean live = true;
    private volatile SocketChannel stream;
    /** Events lost because the application did not read its async_fd; device thread only. */
    private long dropped;

    /** Device thread: one event about the object {@code handle} of {@code kind}. */
    void onEvent(final AsyncEventType type, final int kind, final int handle) {
        if (!events.offer(new Event(eventType(type), kind, handle))) {
            dropped++;
        }
    }

    long dropped() {
        return dropped;
    }

    /** Connection thread: writes events until {@link #shutdown} or the peer goes away. */
    void stream(final SocketChannel ch) throws IOException {
        stream = ch;
        final ByteBuffer out = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (live && ch.isOpen()) {
                final Event e;
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
                out.putInt(e.type).putInt(e.kind).putInt(e.handle).putInt(0).flip();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
            }
        } finally {
            ch.close();
        }
    }

    void shutdown() {
        live = false;
        final SocketChannel s = stream;
        if (s != null) {
            try {
                s.close();
            } catch (final IOException e) {
                // closing anyway
            }
        }
    }

    /** {@code enum ibv_event_type} value. */
    static int eventType(final AsyncEventType type) {
        return switch (type) {
            case CQ_ERR -> 0;
            case QP_FATAL -> 1;
            case QP_REQ_ERR -> 2;
            case QP_ACCESS_ERR -> 3;
            case SQ_DRAINED -> 5;
            case SRQ_ERR -> 14;
            case SRQ_LIMIT_REACHED -> 15;
            case QP_LAST_WQE_REACHED -> 16;
        };
    }

    /** The kind of object an event of {@code type} names. */
    static int kindOf(final AsyncEventType type) {
        return switch (type) {
            case CQ_ERR -> KIND_CQ;
            case SRQ_ERR, SRQ_LIMIT_REACHED -> KIND_SRQ;
            default -> KIND_QP;
        };
    }
}
