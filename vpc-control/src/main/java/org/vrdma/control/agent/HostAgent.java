package org.vrdma.control.agent;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.vrdma.control.client.ControlClient;
import org.vrdma.control.service.Json;

/**
 * The controller's agent on one host: long-polls {@code GET /v1/hosts/{id}/desired-state} and
 * programs the host's {@link DataPlaneProgrammer}.
 *
 * <p>It starts with no version, so its first answer is the full state, which the programmer
 * reconciles to (an agent restart therefore converges by itself). It then asks from the version it
 * has and applies the deltas it gets in order; a delta that does not start at its version (a gap)
 * makes it drop its version and resync in full. When the controller is unreachable it retries
 * with a bounded back-off, keeping its version, so a restarted controller (whose journal is empty)
 * answers with the full state and the agent reconciles again.
 */
public final class HostAgent implements AutoCloseable {
    public static final Duration POLL_WAIT = Duration.ofSeconds(20);
    private static final long MAX_BACKOFF_MS = 1_000;

    private final String hostId;
    private final ControlClient client;
    private final DataPlaneProgrammer programmer;
    private final Thread thread;
    private final AtomicLong fullSyncs = new AtomicLong();
    private final AtomicLong deltasApplied = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile HostDesiredState state;
    private volatile boolean closed;
    private volatile String lastError;

    public HostAgent(String endpoint, String token, String hostId, DataPlaneProgrammer programmer) {
        this.hostId = hostId;
        this.client = new ControlClient(endpoint, token);
        this.programmer = programmer;
        this.thread = Thread.ofPlatform().name("host-agent-" + hostId).daemon().start(this::run);
    }

    private void run() {
        long backoff = 50;
        while (!closed) {
            try {
                long since = state == null ? -1 : state.version();
                ControlClient.Response r = client.send(
                        "GET",
                        "/v1/hosts/" + hostId + "/desired-state?since=" + since + "&waitMs=" + POLL_WAIT.toMillis(),
                        null,
                        Map.of(),
                        POLL_WAIT.plusSeconds(10));
                if (!r.ok()) {
                    throw new IllegalStateException(r.errorText());
                }
                apply(Json.read(r.body(), SyncResponse.class));
                backoff = 50;
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                failures.incrementAndGet();
                lastError = e.toString();
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
            }
        }
    }

    private void apply(SyncResponse r) {
        switch (r.type()) {
            case SyncResponse.FULL -> {
                programmer.applyDesiredState(r.state());
                state = r.state();
                fullSyncs.incrementAndGet();
                programmer.committed(state.version());
            }
            case SyncResponse.DELTA -> {
                HostDesiredState s = state;
                for (StateDelta d : r.deltas()) {
                    if (s == null || d.fromVersion() != s.version()) {
                        // A gap: forget the version so the next poll fetches the full state.
                        state = null;
                        return;
                    }
                    try {
                        s = DesiredStates.apply(s, d, programmer);
                    } catch (RuntimeException e) {
                        // The data plane refused a change: resync in full rather than retry the same delta.
                        state = null;
                        throw e;
                    }
                    state = s;
                    deltasApplied.incrementAndGet();
                }
                programmer.committed(s.version());
            }
            case SyncResponse.UNCHANGED -> {}
            default -> throw new IllegalStateException("unknown answer type " + r.type());
        }
    }

    public String hostId() {
        return hostId;
    }

    /** The version the data plane is programmed at (-1 before the first sync). */
    public long version() {
        HostDesiredState s = state;
        return s == null ? -1 : s.version();
    }

    public HostDesiredState state() {
        return state;
    }

    public long fullSyncs() {
        return fullSyncs.get();
    }

    public long deltasApplied() {
        return deltasApplied.get();
    }

    public long failures() {
        return failures.get();
    }

    public String lastError() {
        return lastError;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        client.close();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
