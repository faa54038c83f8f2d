package org.vrdma.harness.lab.virtual;

import java.util.ArrayList;
import java.util.List;
import org.vrdma.harness.lab.WorkloadSpec;
import org.vrdma.vnic.verbs.QueuePair;

/** A perftest-style workload in flight: its flows (bandwidth tests) or its ping-pong (latency). */
final class PerftestRun {
    final int index;
    final WorkloadSpec.Perftest spec;
    final VirtualEni client;
    final VirtualEni server;
    final int sizeBytes;
    final long iterations;
    final List<Flow> flows = new ArrayList<>();
    long startNs = -1;
    long endNs = -1;
    boolean failed;

    // Ping-pong.
    QueuePair clientQp;
    QueuePair serverQp;
    long roundTrips;
    long sentAtNs;
    long[] halfRttNs;
    long verifiedBytes;
    long mismatchedBytes;

    PerftestRun(
            int index,
            WorkloadSpec.Perftest spec,
            VirtualEni client,
            VirtualEni server,
            int sizeBytes,
            long iterations) {
        this.index = index;
        this.spec = spec;
        this.client = client;
        this.server = server;
        this.sizeBytes = sizeBytes;
        this.iterations = iterations;
    }

    boolean done() {
        return endNs >= 0 || failed;
    }
}
