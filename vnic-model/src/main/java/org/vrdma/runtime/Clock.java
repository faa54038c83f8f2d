package org.vrdma.runtime;

/**
 * The only source of time for protocol engines. Real time reads {@code System.nanoTime}; virtual
 * time reads the discrete-event scheduler. Engines never read the wall clock themselves.
 */
@FunctionalInterface
public interface Clock {
    /** Current time in nanoseconds; monotonic, with an arbitrary origin. */
    long nowNs();
}
