package org.vrdma.harness.ccsim;

import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.cc.TransmitGate;
import org.vrdma.runtime.TimerHandler;
import org.vrdma.runtime.TimerService;
import org.vrdma.runtime.VirtualTimeScheduler;

/**
 * Sending end of one flow: a {@link TransmitGate} (the algorithm under test, its pacer and window)
 * decides departures, retransmissions included; loss is repaired go-back-N from a NAK or a
 * retransmission timeout. The timeout backs off exponentially (doubling, at most {@value
 * #MAX_RTO_BACKOFF_SHIFT} times) while no new data is acknowledged, as RoCE NICs and the DESIGN's
 * reliability model do, so repeated losses of a retransmission cannot keep a congested port full.
 */
final class FlowSender implements TimerHandler {
    /** Largest exponent of the timeout back-off: the timeout grows to at most 64 times its base. */
    static final int MAX_RTO_BACKOFF_SHIFT = 6;

    private final VirtualTimeScheduler scheduler;
    private final DumbbellConfig config;
    private final BottleneckPort bottleneck;
    private final TransmitGate gate;
    private final long sizeBytes;
    private final FlowReceiver receiver;
    private long sndNxt;
    private long sndUna;
    private long txTimerId = TimerService.NO_TIMER;
    private long ccTimerId = TimerService.NO_TIMER;
    private long ccDeadlineNs = CongestionControl.NO_TIMER;
    private long rtoTimerId = TimerService.NO_TIMER;
    private long linkFreeNs;
    private long lastProgressNs;
    private int rtoBackoffShift;
    private long retransmittedBytes;
    private long timeouts;
    private long startNs = -1;
    private long completedNs = -1;

    FlowSender(
            final VirtualTimeScheduler scheduler,
            final DumbbellConfig config,
            final BottleneckPort bottleneck,
            final CongestionControl cc,
            final long sizeBytes) {
        this.scheduler = scheduler;
        this.config = config;
        this.bottleneck = bottleneck;
        this.gate = new TransmitGate(cc, 0);
        this.sizeBytes = sizeBytes;
        this.receiver = new FlowReceiver(scheduler, config, this);
    }

    void start(final long nowNs) {
        startNs = nowNs;
        lastProgressNs = nowNs;
        trySend(nowNs);
    }

    @Override
    public void onTimer(final long nowNs, final long timerId) {
        if (timerId == txTimerId) {
            txTimerId = TimerService.NO_TIMER;
            trySend(nowNs);
        } else if (timerId == ccTimerId) {
            ccTimerId = TimerService.NO_TIMER;
            ccDeadlineNs = CongestionControl.NO_TIMER;
            gate.onTimer(nowNs);
            afterCcEvent(nowNs);
        } else if (timerId == rtoTimerId) {
            rtoTimerId = TimerService.NO_TIMER;
            onRtoCheck(nowNs);
        }
    }

    void onAck(final long nowNs, final long ackSeq, final long sentNs, final boolean ce, final IntTelemetry telemetry) {
        if (ackSeq <= sndUna) {
            return;
        }
        final long acked = ackSeq - sndUna;
        sndUna = ackSeq;
        sndNxt = Math.max(sndNxt, sndUna);
        lastProgressNs = nowNs;
        rtoBackoffShift = 0;
        if (telemetry != null) {
            gate.onAck(nowNs, acked, nowNs - sentNs, ce, telemetry);
        } else {
            gate.onAck(nowNs, acked, nowNs - sentNs, ce);
        }
        if (sndUna >= sizeBytes && completedNs < 0) {
            completedNs = nowNs;
        }
        afterCcEvent(nowNs);
    }

    void onNak(final long nowNs, final long expectedSeq) {
        if (expectedSeq < sndUna || expectedSeq >= sndNxt) {
            return;
        }
        final long lost = sndNxt - expectedSeq;
        retransmittedBytes += lost;
        sndNxt = expectedSeq;
        gate.onLoss(nowNs, lost);
        afterCcEvent(nowNs);
    }

    void onCnp(final long nowNs) {
        gate.onCnp(nowNs);
        afterCcEvent(nowNs);
    }

    private void onRtoCheck(final long nowNs) {
        if (sndUna >= sizeBytes) {
            return;
        }
        if (sndUna < sndNxt && nowNs - lastProgressNs >= rtoNs()) {
            retransmittedBytes += sndNxt - sndUna;
            sndNxt = sndUna;
            lastProgressNs = nowNs;
            rtoBackoffShift = Math.min(MAX_RTO_BACKOFF_SHIFT, rtoBackoffShift + 1);
            timeouts++;
            gate.onTimeout(nowNs);
            afterCcEvent(nowNs);
        }
        armRto(Math.max(nowNs + 1, lastProgressNs + rtoNs()));
    }

    /** The current retransmission timeout: the base, doubled per timeout without progress. */
    long rtoNs() {
        return config.rtoNs() << rtoBackoffShift;
    }

    private void afterCcEvent(final long nowNs) {
        syncCcTimer();
        // The rate or window may have changed: re-decide the next departure now.
        if (txTimerId != TimerService.NO_TIMER) {
            scheduler.cancel(txTimerId);
            txTimerId = TimerService.NO_TIMER;
        }
        trySend(nowNs);
    }

    private void trySend(final long nowNs) {
        if (startNs < 0 || sndNxt >= sizeBytes || txTimerId != TimerService.NO_TIMER) {
            return;
        }
        final int bytes = (int) Math.min(config.mtuBytes(), sizeBytes - sndNxt);
        final long allowedNs = gate.earliestDepartureNs(nowNs, bytes);
        if (allowedNs == TransmitGate.BLOCKED) {
            return; // an ACK will reopen the window
        }
        // The sender's own link serialises one packet at a time.
        final long departureNs = Math.max(allowedNs, linkFreeNs);
        if (departureNs > nowNs) {
            txTimerId = scheduler.scheduleAt(departureNs, this);
            return;
        }
        final SimPacket packet = new SimPacket(this, sndNxt, bytes, nowNs);
        sndNxt += bytes;
        linkFreeNs = nowNs + config.serialisationNs(bytes);
        gate.onPacketSent(nowNs, bytes);
        scheduler.scheduleAt(linkFreeNs + config.linkDelayNs(), (t, id) -> bottleneck.onArrival(t, packet));
        if (rtoTimerId == TimerService.NO_TIMER) {
            armRto(nowNs + rtoNs());
        }
        syncCcTimer();
        trySend(nowNs);
    }

    private void syncCcTimer() {
        final long deadlineNs = gate.nextTimerNs();
        if (deadlineNs != ccDeadlineNs) {
            if (ccTimerId != TimerService.NO_TIMER) {
                scheduler.cancel(ccTimerId);
                ccTimerId = TimerService.NO_TIMER;
            }
            ccDeadlineNs = deadlineNs;
            if (deadlineNs != CongestionControl.NO_TIMER) {
                ccTimerId = scheduler.scheduleAt(deadlineNs, this);
            }
        }
    }

    private void armRto(final long deadlineNs) {
        rtoTimerId = scheduler.scheduleAt(deadlineNs, this);
    }

    FlowReceiver receiver() {
        return receiver;
    }

    CongestionControl congestionControl() {
        return gate.congestionControl();
    }

    long retransmittedBytes() {
        return retransmittedBytes;
    }

    long timeouts() {
        return timeouts;
    }

    long deliveredBytes() {
        return receiver.deliveredBytes();
    }

    long completionTimeNs() {
        return completedNs < 0 ? -1 : completedNs - startNs;
    }

    boolean completed() {
        return completedNs >= 0;
    }
}
