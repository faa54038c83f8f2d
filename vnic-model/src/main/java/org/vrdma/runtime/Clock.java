package org.vrdma.runtime;

/**
 * The only source of time for protocol engines. Real time reads the JVM's monotonic clock; virtual
 * time reads the discrete-event scheduler. Engines never read the wall clock themselves.
 */
@FunctionalInterface
public interface Clock {
    /** Current time in nanoseconds; monotonic, with an arbitrary origin. */
    long nowNs();
}
