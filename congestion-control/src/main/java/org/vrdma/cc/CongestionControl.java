package org.vrdma.cc;

/**
 * Congestion control of one flow (one queue pair): an event-driven state machine that turns what a
 * NIC observes into a sending rate for the {@link Pacer} and a congestion window for the {@link
 * TxWindow}.
 *
 * <p>Every callback carries the current time as {@code nowNs}; implementations never read a clock,
 * so the same class runs in real time and in virtual time. Implementations are confined to the
 * caller's thread and must not allocate in callbacks. Every callback has a no-op default, so an
 * algorithm implements only the events it reacts to.
 *
 * <h2>How a caller drives it</h2>
 *
 * <ul>
 *   <li>Report events as they happen: {@link #onPacketSent} for every data packet put on the wire
 *       (retransmissions included), {@link #onAck} for every ACK that acknowledges new data, then
 *       {@link #onInt} if that ACK carried INT telemetry, {@link #onCnp} for every CNP, {@link
 *       #onLoss} on a NAK (sequence error) or a detected hole, {@link #onTimeout} on a
 *       retransmission timeout.
 *   <li>After any callback, read {@link #rateBps()} into the pacer and {@link #windowBytes()} into
 *       the TX window. Both are plain field reads in the reference algorithms.
 *   <li>After any callback, read {@link #nextTimerNs()}: if it differs from the deadline the caller
 *       has armed, re-arm its timer (or disarm it on {@link #NO_TIMER}). When the timer expires,
 *       call {@link #onTimer}. Implementations tolerate early, late and spurious {@code onTimer}
 *       calls: they act only on deadlines that have passed.
 * </ul>
 */
public interface CongestionControl {
    /** {@link #windowBytes()} of an algorithm that does not limit bytes in flight. */
    long UNLIMITED_WINDOW = Long.MAX_VALUE;

    /** {@link #nextTimerNs()} when the algorithm needs no timer. */
    long NO_TIMER = Long.MAX_VALUE;

    /** The registered name of the algorithm, for example {@code "dcqcn"}. */
    String name();

    /**
     * A data packet of {@code bytes} (its wire size) left the sender.
     *
     * @param nowNs current time
     * @param bytes bytes put on the wire, headers included
     */
    default void onPacketSent(long nowNs, int bytes) {}

    /**
     * An ACK acknowledged new data.
     *
     * @param nowNs current time
     * @param ackedBytes bytes newly acknowledged by this ACK
     * @param rttNs round-trip time measured for the acknowledged packet, or -1 without a sample
     * @param ecnEcho true if the acknowledged data arrived with the CE mark
     */
    default void onAck(long nowNs, long ackedBytes, long rttNs, boolean ecnEcho) {}

    /** A congestion notification packet (RoCEv2 CNP) arrived for this flow. */
    default void onCnp(long nowNs) {}

    /**
     * Loss was detected without a timeout: a NAK (PSN sequence error) or a hole in selective
     * acknowledgements.
     *
     * @param lostBytes bytes presumed lost, or 0 when unknown
     */
    default void onLoss(long nowNs, long lostBytes) {}

    /** The retransmission timer expired. */
    default void onTimeout(long nowNs) {}

    /**
     * The last {@link #onTimeout} was spurious: the packet it resent had arrived (the receiver
     * answered the resent copy as a duplicate after the original's acknowledgement), so it was a
     * delay spike, not a loss. An algorithm that cut its rate or window on the timeout restores
     * it (the Eifel response, RFC 4015); the default keeps the reaction.
     */
    default void onSpuriousTimeout(long nowNs) {}

    /**
     * The transport sent packets again without a loss signal: a tail-loss probe after a quiet
     * round trip (the loss is not confirmed; the packets may still be on their way), or holes found
     * lost because a packet sent after them arrived. No reaction to congestion is due, but the
     * sending order no longer follows the sequence.
     */
    default void onResend(long nowNs) {}

    /**
     * In-band network telemetry echoed by the receiver on the ACK just reported with {@link
     * #onAck}. The holder is reused by the caller: read it now, never keep it.
     */
    default void onInt(long nowNs, IntTelemetry telemetry) {}

    /** The timer requested through {@link #nextTimerNs()} expired (or an earlier wake-up). */
    default void onTimer(long nowNs) {}

    /** The rate the pacer should send at, in bits per second; always positive. */
    long rateBps();

    /** The congestion window in bytes, or {@link #UNLIMITED_WINDOW}; always positive. */
    default long windowBytes() {
        return UNLIMITED_WINDOW;
    }

    /** Absolute deadline at which {@link #onTimer} should be called, or {@link #NO_TIMER}. */
    default long nextTimerNs() {
        return NO_TIMER;
    }
}
