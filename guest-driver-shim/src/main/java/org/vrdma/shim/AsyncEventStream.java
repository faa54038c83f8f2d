package org.vrdma.shim;

import java.io.IOException;
import java.nio.channels.SocketChannel;
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
    static final int KIND_QP = ControlProtocol.ASYNC_KIND_QP;

    static final int KIND_CQ = ControlProtocol.ASYNC_KIND_CQ;
    static final int KIND_SRQ = ControlProtocol.ASYNC_KIND_SRQ;
    static final int KIND_PORT = ControlProtocol.ASYNC_KIND_PORT;
    static final int KIND_DEVICE = ControlProtocol.ASYNC_KIND_DEVICE;

    private record Event(int type, int kind, int handle) {}

    private final EventStream<Event> events = new EventStream<>(
            QUEUE,
            16,
            (e, out) -> out.putInt(e.type).putInt(e.kind).putInt(e.handle).putInt(0));

    /** Device thread: one event about the object {@code handle} of {@code kind}. */
    void onEvent(final AsyncEventType type, final int kind, final int handle) {
        events.offer(new Event(eventType(type), kind, handle));
    }

    /** Waits up to {@code timeoutMs} until the connection has taken every queued event. */
    void awaitWritten(final long timeoutMs) {
        events.awaitEmpty(timeoutMs);
    }

    long dropped() {
        return events.dropped();
    }

    /** Connection thread: writes events until {@link #shutdown} or the peer goes away. */
    void stream(final SocketChannel ch) throws IOException {
        events.stream(ch);
    }

    void shutdown() {
        events.shutdown();
    }

    /** {@code enum ibv_event_type} value. */
    static int eventType(final AsyncEventType type) {
        return switch (type) {
            case CQ_ERR -> 0;
            case QP_FATAL -> 1;
            case QP_REQ_ERR -> 2;
            case QP_ACCESS_ERR -> 3;
            case COMM_EST -> 4;
            case SQ_DRAINED -> 5;
            case DEVICE_FATAL -> 8;
            case PORT_ACTIVE -> 9;
            case PORT_ERR -> 10;
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
            case PORT_ACTIVE, PORT_ERR -> KIND_PORT;
            case DEVICE_FATAL -> KIND_DEVICE;
            default -> KIND_QP;
        };
    }
}
