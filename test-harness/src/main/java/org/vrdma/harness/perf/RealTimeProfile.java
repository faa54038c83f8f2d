package org.vrdma.harness.perf;

import org.vrdma.vnic.transport.TransportConfig;

/** Transport settings for the vNIC over real sockets, where the path is the kernel and two event loops. */
public final class RealTimeProfile {
    private RealTimeProfile() {}

    /**
     * The defaults with a 1 ms RTO floor: a 100 µs floor (right for a 10 µs fabric) fires spuriously
     * when the RTT includes two event loops and the kernel.
     */
    public static TransportConfig transport() {
        return TransportConfig.defaults().withRto(1_000_000, 2_000_000);
    }
}
