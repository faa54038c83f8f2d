package org.vrdma.control.service;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.vrdma.control.agent.DesiredStates;
import org.vrdma.control.agent.HostDesiredState;
import org.vrdma.control.agent.StateDelta;
import org.vrdma.control.agent.SyncResponse;
import org.vrdma.control.store.ResourceStore;

/**
 * Keeps every host's current desired state and a bounded journal of the deltas that led to it, and
 * answers agents' long polls.
 *
 * <p>After each committed write a single publisher thread recomputes the hosts' states from one
 * store snapshot (bursts of writes coalesce into one recomputation), diffs each against the last
 * one, appends the non-empty deltas to that host's journal and wakes the waiting polls. A poll from
 * version {@code v} gets the deltas from {@code v} on when the journal still reaches back to
 * {@code v}, its full state otherwise (first contact, an agent too far behind, or a controller that
 * restarted and so has an empty journal), and waits when {@code v} is current.
 */
public final class DesiredStatePublisher implements AutoCloseable {
    public static final int JOURNAL_LENGTH = 256;

    private final ResourceStore store;
    private final Thread thread;
    private final Map<String, HostDesiredState> current = new HashMap<>();
    private final Map<String, Deque<StateDelta>> journals = new HashMap<>();
    private long publishedRevision = -1;
    private long requestedRevision;
    private boolean closed;
    private long recomputations;

    public DesiredStatePublisher(ResourceStore store) {
        this.store = store;
        this.requestedRevision = store.revision();
        recompute();
        this.thread =
                Thread.ofPlatform().name("desired-state-publisher").daemon().start(this::run);
    }

    /** Tells the publisher the store reached {@code revision}; returns at once. */
    public synchronized void commit(long revision) {
        if (revision > requestedRevision) {
            requestedRevision = revision;
            notifyAll();
        }
    }

    private void run() {
        while (true) {
            synchronized (this) {
                while (!closed && requestedRevision <= publishedRevision) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    return;
                }
            }
            try {
                recompute();
            } catch (RuntimeException e) {
                // The store failed (closing, I/O); the next commit retries.
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                    try {
                        wait(100);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    private void recompute() {
        record Snapshot(long revision, Map<String, HostDesiredState> states) {}
        Snapshot snap = store.read(view -> new Snapshot(view.revision(), DesiredStateComputer.compute(view)));
        synchronized (this) {
            recomputations++;
            if (snap.revision() <= publishedRevision) {
                return;
            }
            current.keySet().retainAll(snap.states().keySet());
            journals.keySet().retainAll(snap.states().keySet());
            for (var e : snap.states().entrySet()) {
                HostDesiredState before = current.get(e.getKey());
                HostDesiredState after = e.getValue();
                if (before == null) {
                    current.put(e.getKey(), after);
                    journals.put(e.getKey(), new ArrayDeque<>());
                } else if (!before.sameContent(after)) {
                    Deque<StateDelta> journal = journals.get(e.getKey());
                    journal.addLast(DesiredStates.diff(before, after));
                    while (journal.size() > JOURNAL_LENGTH) {
                        journal.removeFirst();
                    }
                    current.put(e.getKey(), after);
                }
            }
            publishedRevision = snap.revision();
            notifyAll();
        }
    }

    /** The current desired state of a host, or null when there is no such host. */
    public synchronized HostDesiredState state(String hostId) {
        return current.get(hostId);
    }

    /** The store revision the published states were computed at. */
    public synchronized long publishedRevision() {
        return publishedRevision;
    }

    /** Waits, at most {@code timeout}, until the states are computed at {@code revision} or later. */
    public synchronized boolean awaitPublished(long revision, java.time.Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (publishedRevision < revision) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    public synchronized long recomputations() {
        return recomputations;
    }

    public synchronized int hosts() {
        return current.size();
    }

    /**
     * Answers a poll from an agent at version {@code since}, waiting up to {@code waitMs} for a change
     * when it is current. Returns null when the host does not exist.
     */
    public synchronized SyncResponse poll(String hostId, long since, long waitMs) throws InterruptedException {
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        while (true) {
            HostDesiredState state = current.get(hostId);
            if (state == null) {
                return null;
            }
            if (since != state.version()) {
                List<StateDelta> deltas = deltasSince(hostId, since);
                if (deltas == null) {
                    return new SyncResponse(SyncResponse.FULL, state.version(), state, null);
                }
                return new SyncResponse(SyncResponse.DELTA, state.version(), null, deltas);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed) {
                return new SyncResponse(SyncResponse.UNCHANGED, state.version(), null, null);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    private List<StateDelta> deltasSince(String hostId, long since) {
        Deque<StateDelta> journal = journals.get(hostId);
        List<StateDelta> out = new ArrayList<>();
        boolean found = false;
        for (StateDelta d : journal) {
            if (d.fromVersion() == since) {
                found = true;
            }
            if (found) {
                out.add(d);
            }
        }
        return found ? out : null;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
