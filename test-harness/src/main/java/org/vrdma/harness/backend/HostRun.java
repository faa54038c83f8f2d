package org.vrdma.harness.backend;

import java.time.Duration;

/** One {@code ./vrdma} process (or in-process run) on a lab host. */
public interface HostRun {
    /** The exit status {@link #await} reports when the run did not finish in time (it is killed). */
    int TIMED_OUT = -1;

    /** Waits for the run to end and returns its exit status; kills it and returns {@link #TIMED_OUT} after {@code timeout}. */
    int await(Duration timeout) throws InterruptedException;

    /** Whether the run has ended. */
    boolean finished();

    /** What the run printed so far, standard output then standard error. */
    String output();

    /** Whether {@link #output()} shows what the run printed before it ended (docker exec does not). */
    default boolean outputWhileRunning() {
        return true;
    }

    /** Ends the run now if it still runs. */
    void kill();
}
