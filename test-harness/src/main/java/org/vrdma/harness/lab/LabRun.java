package org.vrdma.harness.lab;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A lab that is up on some backend: handles to its hosts and ENIs, a way to let it run, the lab's
 * workloads, and cleanup. Obtained from {@link LabBackend#start}; always close it (try-with-resources).
 *
 * <p>Threading: each ENI's vNIC is confined to one thread (the virtual-time scheduler's, or an
 * event loop); use {@link EniHandle#call} to run verbs on it. {@link #await} is how a caller lets
 * time pass: the virtual backend runs events until the condition holds; real-time backends wait on
 * the wall clock (bounded).
 */
public interface LabRun extends AutoCloseable {
    /** The lab with defaults applied. */
    Lab lab();

    /** The resolved hosts, ENIs, switches and links. */
    LabNetwork network();

    /** The backend's name. */
    String backend();

    /** One line: what runs where, and what of the links is modelled. */
    String describe();

    List<HostHandle> hosts();

    /** Host by name ({@code h0}, ...); LabException when there is none. */
    default HostHandle host(String name) {
        for (HostHandle h : hosts()) {
            if (h.name().equals(name)) {
                return h;
            }
        }
        throw new LabException("", "no host " + name);
    }

    /** ENI by reference ({@code h0} for its first ENI, or {@code h0/eni1}); LabException when there is none. */
    EniHandle eni(String ref);

    /** The lab's time now (virtual or monotonic wall clock), in ns. */
    long nowNs();

    /**
     * Lets the lab run until {@code done} holds or {@code timeoutNs} of the lab's time passes;
     * {@code done} is evaluated on the lab's thread (virtual) or the caller's (real time).
     *
     * @return whether {@code done} held
     */
    boolean await(BooleanSupplier done, long timeoutNs);

    /**
     * Runs the lab's workloads for its duration (plus the drain time for flows in flight) and
     * collects the statistics. May be called once.
     *
     * @param progress told how far the run is (virtual time done of the total); never null, use
     *     {@link RunProgress#NONE}
     */
    LabResults run(RunProgress progress);

    /** Removes everything the backend created; idempotent, never throws for cleanup failures it logged. */
    @Override
    void close();
}
