package org.vrdma.harness.ccsim;

import org.vrdma.runtime.VirtualTimeScheduler;

/**
 * Receiving end of one flow (the RoCE notification point): delivers bytes in order, ACKs every
 * packet with ECN echo and the packet's INT, NAKs the first gap once, and sends a CNP for CE-marked
 * packets at most once per CNP interval.
 */
final class FlowReceiver {
    private final VirtualTimeScheduler scheduler;
    private final DumbbellConfig config;
    private final FlowSender sender;
    private long expectedSeq;
    private long nakedSeq = -1;
    private long lastCnpNs = Long.MIN_VALUE / 2;
    private long deliveredBytes;

    FlowReceiver(final VirtualTimeScheduler scheduler, final DumbbellConfig config, final FlowSender sender) {
        this.scheduler = scheduler;
        this.config = config;
        this.sender = sender;
    }

    void onPacket(final long nowNs, final SimPacket packet) {
        final long backNs = nowNs + 2 * config.linkDelayNs();
        if (packet.ce && nowNs - lastCnpNs >= config.cnpIntervalNs()) {
            lastCnpNs = nowNs;
            scheduler.scheduleAt(backNs, (t, id) -> sender.onCnp(t));
        }
        if (packet.seq == expectedSeq) {
            expectedSeq += packet.bytes;
            deliveredBytes += packet.bytes;
            final long ackSeq = expectedSeq;
            scheduler.scheduleAt(
                    backNs, (t, id) -> sender.onAck(t, ackSeq, packet.sentNs, packet.ce, packet.telemetry));
        } else if (packet.seq > expectedSeq && nakedSeq != expectedSeq) {
            nakedSeq = expectedSeq;
            final long nakSeq = expectedSeq;
            scheduler.scheduleAt(backNs, (t, id) -> sender.onNak(t, nakSeq));
        }
    }

    long deliveredBytes() {
        return deliveredBytes;
    }
}
