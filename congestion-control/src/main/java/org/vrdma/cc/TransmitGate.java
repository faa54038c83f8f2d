package org.vrdma.cc;

/**
 * Decides when the next packet of one flow may leave: its {@link CongestionControl} feeds a {@link
 * Pacer} (rate) and a {@link TxWindow} (bytes in flight). The transport reports events here instead
 * of to the algorithm directly, and the gate keeps pacer and window in step after every event.
 *
 * <p>Timers: after any call, {@link #nextTimerNs()} is the deadline the caller's timer service should
 * fire {@link #onTimer} at ({@link CongestionControl#NO_TIMER} for none).
 */
public final class TransmitGate {
    /** {@link #earliestDepartureNs} when the window is full: wait for an ACK. */
    public static final long BLOCKED = Long.MAX_VALUE;

    private final CongestionControl cc;
    private final Pacer pacer;
    private final TxWindow window = new TxWindow();

    /**
     * @param cc the flow's congestion control
     * @param burstBytes pacer burst, see {@link Pacer}
     */
    public TransmitGate(final CongestionControl cc, final long burstBytes) {
        this.cc = cc;
        this.pacer = new Pacer(cc.rateBps(), burstBytes);
        window.windowBytes(cc.windowBytes());
    }

    /** Earliest departure of a packet of {@code bytes}, or {@link #BLOCKED} while the window is full. */
    public long earliestDepartureNs(final long nowNs, final int bytes) {
        return window.allows(bytes) ? pacer.earliestDepartureNs(nowNs, bytes) : BLOCKED;
    }

    /** A data packet of {@code bytes} left at {@code nowNs}. */
    public void onPacketSent(final long nowNs, final int bytes) {
        pacer.onSent(nowNs, bytes);
        window.onSent(bytes);
        cc.onPacketSent(nowNs, bytes);
        sync(nowNs);
    }

    /** An ACK for {@code ackedBytes} of new data; see {@link CongestionControl#onAck}. */
    public void onAck(final long nowNs, final long ackedBytes, final long rttNs, final boolean ecnEcho) {
        window.onAcked(ackedBytes);
        cc.onAck(nowNs, ackedBytes, rttNs, ecnEcho);
        sync(nowNs);
    }

    /** An ACK carrying INT telemetry: {@link #onAck} followed by {@link CongestionControl#onInt}. */
    public void onAck(
            final long nowNs,
            final long ackedBytes,
            final long rttNs,
            final boolean ecnEcho,
            final IntTelemetry telemetry) {
        window.onAcked(ackedBytes);
        cc.onAck(nowNs, ackedBytes, rttNs, ecnEcho);
        cc.onInt(nowNs, telemetry);
        sync(nowNs);
    }

    /** A CNP arrived. */
    public void onCnp(final long nowNs) {
        cc.onCnp(nowNs);
        sync(nowNs);
    }

    /**
     * Loss detected by NAK or SACK; {@code lostBytes} leave the in-flight count (they count again when
     * re-sent).
     */
    public void onLoss(final long nowNs, final long lostBytes) {
        window.onAcked(lostBytes);
        cc.onLoss(nowNs, lostBytes);
        sync(nowNs);
    }

    /** Retransmission timeout; nothing is considered in flight any more. */
    public void onTimeout(final long nowNs) {
        window.outstandingBytes(0);
        cc.onTimeout(nowNs);
        sync(nowNs);
    }

    /** Packets went again without a loss signal (see {@link CongestionControl#onResend}). */
    public void onResend(final long nowNs) {
        cc.onResend(nowNs);
    }

    /** The timer requested through {@link #nextTimerNs()} fired. */
    public void onTimer(final long nowNs) {
        cc.onTimer(nowNs);
        sync(nowNs);
    }

    /** Deadline for {@link #onTimer}, or {@link CongestionControl#NO_TIMER}. */
    public long nextTimerNs() {
        return cc.nextTimerNs();
    }

    /** The flow's congestion control. */
    public CongestionControl congestionControl() {
        return cc;
    }

    /** The flow's pacer. */
    public Pacer pacer() {
        return pacer;
    }

    /** The flow's window. */
    public TxWindow window() {
        return window;
    }

    private void sync(final long nowNs) {
        pacer.rateBps(nowNs, cc.rateBps());
        window.windowBytes(cc.windowBytes());
    }
}
