package org.vrdma.harness.backend;

import java.io.IOException;
import java.util.List;

/**
 * Where one lab host runs: this process, a network namespace or a container. Every host process
 * of the lab (a vSwitch with the host's ENI, as {@code ./vrdma host} runs it) is started here and
 * binds this environment's underlay address.
 */
public interface HostEnvironment {
    /** The lab host's name. */
    String hostName();

    /** The underlay IPv4 address the host's vSwitches bind and its peers send to. */
    String underlayIp();

    /** A port on {@link #underlayIp()} that no other run of this lab uses, for UDP or TCP. */
    int allocatePort() throws IOException;

    /** Starts {@code ./vrdma <args>} here; {@code runName} labels its output. */
    HostRun start(String runName, List<String> vrdmaArgs) throws IOException;
}
