package org.vrdma.vnic.verbs;

import java.util.ArrayDeque;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): armed completion queues put an
 * event here when a matching completion arrives; {@link #getEvent()} takes one, like {@code
 * ibv_get_cq_event} without blocking. Events must be acknowledged with {@link
 * CompletionQueue#ackEvents}.
 */
public final class CompletionChannel {
    private final Context context;
    private final ArrayDeque<CompletionQueue> events = new ArrayDeque<>();
    private CompletionEventHandler handler;
    private int cqs;
    private boolean live = true;

    CompletionChannel(final Context context) {
        this.context = context;
    }

    /** Installs a callback for new events (or null). */
    public void handler(final CompletionEventHandler handler) {
        this.handler = handler;
    }

    /** The next event's completion queue, or null if none is pending. */
    public CompletionQueue getEvent() {
        return events.pollFirst();
    }

    /** Pending events. */
    public int pendingEvents() {
        return events.size();
    }

    /** Destroys the channel; EBUSY while completion queues use it. */
    public void destroy() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "channel already destroyed");
        }
        if (cqs != 0) {
            throw new VerbsException(Errno.EBUSY, cqs + " completion queues use this channel");
        }
        live = false;
        context.onChannelDestroyed();
    }

    void onEvent(final CompletionQueue cq) {
        events.addLast(cq);
        if (handler != null) {
            handler.onCompletionEvent(cq);
        }
    }

    void attach() {
        if (!live) {
            throw new VerbsException(Errno.EINVAL, "channel destroyed");
        }
        cqs++;
    }

    void detach() {
        cqs--;
    }
}
