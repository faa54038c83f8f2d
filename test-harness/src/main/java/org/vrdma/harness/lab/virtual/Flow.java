package org.vrdma.harness.lab.virtual;

import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.WrOpcode;

/** One flow in flight: its QPs, how much is posted and completed, and its INT echo slot. */
final class Flow {
    final int id;
    final String workload;
    final VirtualEni src;
    final VirtualEni dst;
    final long bytes;
    final long startNs;
    final WrOpcode opcode;
    final int messageBytes;
    final String ccName;
    /** Perftest this flow belongs to, or null. */
    final PerftestRun perftest;

    QueuePair requester;
    QueuePair responder;
    CongestionControl cc;
    long postedBytes;
    long postedMessages;
    long completedMessages;
    long completedBytes;
    int outstanding;
    long endNs = -1;
    boolean failed;
    /** The error completion of a failed flow. */
    org.vrdma.vnic.verbs.WcStatus failure;

    long idealFctNs;

    final IntTelemetry lastInt = new IntTelemetry();
    boolean hasInt;

    Flow(
            int id,
            String workload,
            VirtualEni src,
            VirtualEni dst,
            long bytes,
            long startNs,
            WrOpcode opcode,
            int messageBytes,
            String ccName,
            PerftestRun perftest) {
        this.id = id;
        this.workload = workload;
        this.src = src;
        this.dst = dst;
        this.bytes = bytes;
        this.startNs = startNs;
        this.opcode = opcode;
        this.messageBytes = messageBytes;
        this.ccName = ccName;
        this.perftest = perftest;
    }

    boolean done() {
        return endNs >= 0 || failed;
    }
}
