package org.vrdma.harness.perf;

import org.vrdma.runtime.TimerHandler;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.WorkCompletion;

/**
 * Event-driven completion handling, as an application does with a completion channel: when the CQ
 * signals, drain it on the next turn of the endpoint's thread (never inside the transport's own
 * callback), hand each completion to the listener, then re-arm.
 */
final class CompletionPump implements TimerHandler {
    /** Receives completions on the endpoint's thread. */
    interface Listener {
        void onCompletion(WorkCompletion wc, long nowNs);
    }

    private final RdmaEndpoint endpoint;
    private final Listener listener;
    private final WorkCompletion[] batch = new WorkCompletion[64];
    private boolean drainScheduled;

    CompletionPump(RdmaEndpoint endpoint, Listener listener) {
        this.endpoint = endpoint;
        this.listener = listener;
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
        endpoint.channel.handler(this::onEvent);
        endpoint.cq.requestNotify(false);
    }

    private void onEvent(CompletionQueue cq) {
        if (!drainScheduled) {
            drainScheduled = true;
            endpoint.timers.scheduleAt(endpoint.timers.nowNs(), this);
        }
    }

    @Override
    public void onTimer(long nowNs, long timerId) {
        drainScheduled = false;
        int events = 0;
        while (endpoint.channel.getEvent() != null) {
            events++;
        }
        if (events > 0) {
            endpoint.cq.ackEvents(events);
        }
        drain(nowNs);
        endpoint.cq.requestNotify(false);
        // Completions that arrived between the last poll and re-arming raise no event.
        drain(nowNs);
    }

    private void drain(long nowNs) {
        int n;
        while ((n = endpoint.cq.poll(batch)) > 0) {
            for (int i = 0; i < n; i++) {
                listener.onCompletion(batch[i], nowNs);
            }
        }
    }

    void close() {
        endpoint.channel.handler(null);
    }
}
