package org.vrdma.vnic.transport;

/**
 * Where a queue pair's sending rate and window come from: congestion control. The callbacks match
 * those of the congestion-control module's algorithms one for one, so an adapter is trivial; until
 * one is plugged in, {@link StaticRateWindow} supplies constants.
 *
 * <p>Called only from the engine's thread; implementations must not allocate in callbacks.
 */
public interface RateWindowSource {
    /** {@link #rateBps()} of an unpaced source. */
    long UNLIMITED_RATE = Long.MAX_VALUE;
    /** {@link #windowBytes()} of a source that does not limit bytes in flight. */
    long UNLIMITED_WINDOW = Long.MAX_VALUE;
    /** {@link #nextTimerNs()} when no timer is needed. */
    long NO_TIMER = Long.MAX_VALUE;

    /** Pacing rate in bits per second, or {@link #UNLIMITED_RATE}. */
    long rateBps();

    /** Window in bytes, or {@link #UNLIMITED_WINDOW}. */
    long windowBytes();

    /** A data packet of {@code bytes} (wire size) left, retransmissions included. */
    default void onPacketSent(long nowNs, int bytes) {}

    /** New data was acknowledged; {@code rttNs} is -1 without a sample. */
    default void onAck(long nowNs, long ackedBytes, long rttNs, boolean ecnEcho) {}

    /** A CNP arrived for this queue pair. */
    default void onCnp(long nowNs) {}

    /** Loss detected by a NAK or a selective NAK. */
    default void onLoss(long nowNs, long lostBytes) {}

    /** The retransmission timer expired. */
    default void onTimeout(long nowNs) {}

    /**
     * The last {@link #onTimeout} was spurious: the packet it resent had arrived (the responder
     * answered the resent copy as a duplicate after acknowledging the original). A source that cut
     * its rate or window on the timeout may restore it.
     */
    default void onSpuriousTimeout(long nowNs) {}

    /**
     * Packets went again without a loss signal (a tail-loss probe, or holes found lost because a
     * packet sent after them arrived): no reaction to congestion, but the packets sent no longer
     * follow the sequence, as after {@link #onLoss}.
     */
    default void onResend(long nowNs) {}

    /** The timer requested by {@link #nextTimerNs()} expired. */
    default void onTimer(long nowNs) {}

    /** Absolute deadline for {@link #onTimer}, or {@link #NO_TIMER}. */
    default long nextTimerNs() {
        return NO_TIMER;
    }
}
