package org.vrdma.vnic.verbs;

/** Told about each completion a {@link CompletionQueue} publishes, on the device's thread. */
@FunctionalInterface
public interface CompletionListener {
    /** A completion was added to {@code cq}; the listener may poll it at once. */
    void onCompletion(CompletionQueue cq);
}
