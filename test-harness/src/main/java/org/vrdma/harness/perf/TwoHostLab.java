package org.vrdma.harness.perf;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.TransportCounters;

/**
 * Two hosts, each with one vNIC endpoint, on some runtime (virtual time, or real time over the
 * vSwitch overlay). Workloads are the same code on every runtime; the lab runs each piece on the
 * thread that owns the endpoint.
 */
public interface TwoHostLab extends AutoCloseable {
    RdmaEndpoint a();

    RdmaEndpoint b();

    /** Runs {@code action} on host A's thread and returns its result. */
    <T> T onA(Supplier<T> action);

    /** Runs {@code action} on host B's thread and returns its result. */
    <T> T onB(Supplier<T> action);

    /** Lets the hosts run until {@code done} holds or {@code timeoutNs} of the lab's time passes. */
    boolean await(BooleanSupplier done, long timeoutNs);

    /** Applies faults to data and control packets in both directions between the hosts. */
    void faults(FaultConfig data, FaultConfig control);

    /** Sum of both devices' transport counters. */
    TransportCounters transportCounters();

    /** ECN CE marks applied on the path, where the path marks. */
    long ecnMarks();

    /** Frames the path lost to injected faults, both directions. */
    long injectedLosses();

    /** IPv4 address of host B's vNIC and its MAC, for addressing QPs. */
    int ipv4B();

    long macB();

    int ipv4A();

    long macA();

    /** One line saying what this lab is. */
    String describe();

    @Override
    void close();
}
