package org.vrdma.harness.lab;

/**
 * A way to run a {@link Lab}: the service-provider interface every backend implements. Backends are
 * found by name through {@link LabBackends}: {@code virtual} (discrete-event virtual time, modelled
 * links and switches), {@code embedded} (every host in this process, real time, vSwitches over UDP
 * on 127.0.0.1), {@code netns} (one network namespace per host, veth links; root), {@code docker}
 * (one container per host on a Docker network, Testcontainers).
 *
 * <h2>Contract for implementers</h2>
 *
 * <ul>
 *   <li>Register with {@link java.util.ServiceLoader}: a public no-argument constructor and a line in
 *       {@code META-INF/services/org.vrdma.harness.lab.LabBackend}. {@link #name()} is the name users
 *       pass to {@code ./vrdma lab run --backend NAME} and to the JUnit extension.
 *   <li>{@link #start} takes a lab as loaded (it may lack defaults): resolve it with {@link
 *       TopologyGenerator#resolve(Lab)} (which validates it and names every host and ENI the same way
 *       on every backend), bring up each host with a vSwitch and one vNIC ({@code
 *       org.vrdma.vnic.verbs.Device}) per ENI, program routes so each ENI reaches every ENI of its
 *       VPC and no other, and return a {@link LabRun} once every ENI can exchange RDMA.
 *   <li>Links: apply what the backend can emulate of each {@link LinkSpec} (rate, delay, buffer,
 *       ECN, faults), at least on the host links (e.g. the vSwitch uplink {@code EgressPort}); say in
 *       {@link LabRun#describe()} what is modelled and what is not.
 *   <li>Failure: if {@code start} fails half-way it removes everything it created before throwing a
 *       {@link LabException}; {@link LabRun#close()} always removes everything (processes,
 *       namespaces, containers, networks, files) and is idempotent. Resources carry unique names that
 *       include the process id.
 *   <li>{@link #unavailableReason()} says why a backend cannot run here (no root, no Docker) so
 *       callers can report it; it must not be used to skip tests.
 * </ul>
 */
public interface LabBackend {
    /** The registry name: {@code virtual}, {@code embedded}, {@code netns}, {@code docker}, or a plug-in's. */
    String name();

    /** One line for {@code --help}: what this backend runs the lab on. */
    String description();

    /** Null when the backend can run on this machine, else why not (e.g. "needs root"). */
    default String unavailableReason() {
        return null;
    }

    /**
     * Brings the lab up.
     *
     * @throws LabException when the lab is invalid (naming the field) or cannot be brought up here
     */
    LabRun start(Lab lab);
}
