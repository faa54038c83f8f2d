package org.vrdma.vnic.verbs;

/** Woken when a completion channel gets an event, so a driver can signal a sleeping application. */
@FunctionalInterface
public interface CompletionEventHandler {
    void onCompletionEvent(CompletionQueue cq);
}
