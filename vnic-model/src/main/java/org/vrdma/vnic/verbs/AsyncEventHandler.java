package org.vrdma.vnic.verbs;

/**
 * Receives asynchronous events ({@code ibv_get_async_event}). {@code source} is the queue pair,
 * completion queue or shared receive queue the event is about.
 */
@FunctionalInterface
public interface AsyncEventHandler {
    /** Called from the engine's thread when the event happens. */
    void onAsyncEvent(AsyncEventType type, Object source);
}
