package org.vrdma.cc;

/**
 * The sending sequence of one flow in bytes, for algorithms that act once per round trip of data:
 * a round started at some moment ends with the first ACK that acknowledges data sent after it (the
 * {@code snd_nxt} test of the HPCC simulator and of DCTCP's observation windows).
 *
 * <p>Only new data advances the sequence: a NAK or a timeout rewinds it as go-back-N rewinds {@code
 * snd_nxt}, and a rewind also pulls the end of the current round back to the rewind point, since the
 * bytes from there on are sent again after the round started. So retransmissions neither stretch
 * rounds nor stop them from ending. Counting every byte put on the wire instead makes a round end
 * only once the cumulative ACK passes all bytes ever sent, retransmissions included, which after
 * heavy loss never happens; and a rate-based flow that put its whole message on the wire before the
 * first feedback would otherwise wait for an ACK beyond its last byte.
 *
 * <p>A sent packet counts as at most one MTU ({@link #RoundTracker(int)}): transports report a
 * packet's wire size when it leaves (headers included) but acknowledge payload (the RC requester
 * counts {@code packets * pmtu}), so without the cap every packet left its headers behind as
 * bytes that no ACK ever covers. Those phantom bytes grew by about 1.4% of everything sent (58 of
 * 4154 bytes), so a round had to wait for the ACK of that much extra data: 160 KB after 11 MB, which
 * at TIMELY's 100 Mbit/s floor is 13 ms per round instead of one RTT.
 *
 * <p>Drive it from the matching {@link CongestionControl} callbacks: {@link #onSent} from {@code
 * onPacketSent}, {@link #onAcked} from {@code onAck}, {@link #onLost} from {@code onLoss}, {@link
 * #onTimeout} from {@code onTimeout}. Primitive state only, no allocation.
 */
public final class RoundTracker {
    private long ackedBytes;
    private long outstandingBytes;
    private long roundEndBytes = -1;
    private final int maxPacketBytes;

    /** A tracker that counts each sent packet in full (acknowledgements in the same unit). */
    public RoundTracker() {
        this(Integer.MAX_VALUE);
    }

    /**
     * A tracker for a flow whose ACKs count full packets as {@code mtuBytes}: a sent packet counts
     * as at most that, whatever its headers.
     */
    public RoundTracker(final int mtuBytes) {
        if (mtuBytes <= 0) {
            throw new IllegalArgumentException("mtuBytes must be positive: " + mtuBytes);
        }
        this.maxPacketBytes = mtuBytes;
    }

    /** A data packet of {@code bytes} was sent (or re-sent). */
    public void onSent(final int bytes) {
        outstandingBytes += Math.max(0, Math.min(bytes, maxPacketBytes));
    }

    /** {@code bytes} of new data were acknowledged (cumulatively). */
    public void onAcked(final long bytes) {
        if (bytes <= 0) {
            return;
        }
        ackedBytes += bytes;
        outstandingBytes = Math.max(0, outstandingBytes - bytes);
    }

    /**
     * {@code bytes} (the tail of what is outstanding) were declared lost and will be sent again: the
     * sequence rewinds by them.
     */
    public void onLost(final long bytes) {
        outstandingBytes = Math.max(0, outstandingBytes - Math.max(0, bytes));
        rewound();
    }

    /** A retransmission timeout: everything unacknowledged will be sent again. */
    public void onTimeout() {
        outstandingBytes = 0;
        rewound();
    }

    private void rewound() {
        roundEndBytes = Math.min(roundEndBytes, nextSequenceBytes());
    }

    /** Bytes acknowledged so far (the cumulative ACK). */
    public long ackedBytes() {
        return ackedBytes;
    }

    /** Bytes sent and neither acknowledged nor declared lost. */
    public long outstandingBytes() {
        return outstandingBytes;
    }

    /** The next byte to send: acknowledged plus outstanding ({@code snd_nxt}). */
    public long nextSequenceBytes() {
        return ackedBytes + outstandingBytes;
    }

    /** Starts a round now: it ends when an ACK covers data sent from here on. */
    public void startRound() {
        roundEndBytes = nextSequenceBytes();
    }

    /** Whether a round was ever started. */
    public boolean started() {
        return roundEndBytes >= 0;
    }

    /** Whether the round started last has ended (false if none was started). */
    public boolean roundEnded() {
        return roundEndBytes >= 0 && ackedBytes > roundEndBytes;
    }

    @Override
    public String toString() {
        return "RoundTracker[acked=" + ackedBytes + ", outstanding=" + outstandingBytes + ", roundEnd=" + roundEndBytes
                + "]";
    }
}
