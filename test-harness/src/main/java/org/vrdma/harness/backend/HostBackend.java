package org.vrdma.harness.backend;

import java.util.List;
import org.vrdma.harness.lab.LabBackends;

/**
 * How a lab's hosts come to exist: each backend gives every host an environment with its own
 * underlay address and tears all of it down on {@link Hosts#close()}, whatever happened before.
 * {@link #byName} knows {@code embedded} (in process), {@code netns} (one network namespace per
 * host on a bridge, needs root) and {@code docker} (one container per host on a Docker network).
 */
public interface HostBackend {
    /** {@code embedded}, {@code netns} or {@code docker}. */
    String name();

    /**
     * Creates one environment per host. Every name it creates starts with {@code labId}. On
     * failure, what was created is removed before the exception leaves.
     */
    Hosts open(String labId, List<String> hostNames) throws Exception;

    /**
     * What of this backend exists with a name starting with {@code prefix} (namespaces,
     * containers, networks, images), one description each: empty after every lab closed.
     */
    List<String> leftovers(String prefix) throws Exception;

    /** The hosts of one lab. */
    interface Hosts extends AutoCloseable {
        List<HostEnvironment> environments();

        /** Ends every run and removes everything the backend created for the lab. */
        @Override
        void close();
    }

    /**
     * The real-time backend called {@code name}, from the lab backend registry ({@code
     * LabBackends}); throws naming the real-time ones otherwise.
     */
    static HostBackend byName(String name) {
        if (LabBackends.all().get(name) instanceof HostBackend backend) {
            return backend;
        }
        throw new IllegalArgumentException("no real-time lab backend " + name + " (have embedded, netns, docker)");
    }
}
