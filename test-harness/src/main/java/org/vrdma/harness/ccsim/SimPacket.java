package org.vrdma.harness.ccsim;

import org.vrdma.cc.IntTelemetry;

/** A data packet of the dumbbell: which flow, which bytes, when it was sent, and what the fabric did to it. */
final class SimPacket {
    final FlowSender flow;
    final long seq;
    final int bytes;
    final long sentNs;
    boolean ce;
    IntTelemetry telemetry;

    SimPacket(final FlowSender flow, final long seq, final int bytes, final long sentNs) {
        this.flow = flow;
        this.seq = seq;
        this.bytes = bytes;
        this.sentNs = sentNs;
    }
}
