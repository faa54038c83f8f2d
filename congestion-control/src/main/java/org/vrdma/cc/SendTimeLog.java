package org.vrdma.cc;

/**
 * The send times of a flow's recent packets, to tell the round-trip time of the packet that made the
 * receiver send an ACK: the network's delay without the time the receiver held the ACK back.
 *
 * <p>Why: a transport samples one packet per round trip and measures from its departure to the
 * first ACK that covers it. A receiver that coalesces ACKs (one per N packets, or per message)
 * answers that packet only when the N-th packet has arrived, so the sample also holds the time the
 * sender took to pace out the packets after it. At line rate that is a few hundred nanoseconds; at a
 * low rate it is N-1 pacing gaps (about 1 ms for four 4 KiB packets at 100 Mbit/s), far above any
 * delay threshold, and a delay-based algorithm that reads it as queueing keeps cutting its rate
 * because its rate is low. TIMELY measures per completion and subtracts the segment's serialisation
 * (Mittal et al. 2015) and Swift subtracts the receiver's ACK delay (Kumar et al. 2020) for this
 * reason; this log gives the same delay from the send times alone.
 *
 * <p>How: packets are logged in sending order. The ACK's cumulative count (in packets of {@code
 * mtuBytes}) names the newest packet it acknowledges, whose arrival triggered it; its send time is
 * looked up in the log. Retransmissions make the sending order run ahead of the sequence by some
 * lag. A timeout or a NAK sets it to "everything outstanding is sent again" (go-back-N); every
 * transport sample re-anchors it, since the sampled packet (sent exactly {@code rtt} ago, never a
 * retransmission) is one of the packets this ACK acknowledges. After a loss the lag is thus the
 * largest the sample allows, i.e. the sampled packet is taken as the first one the ACK covers: at low rates,
 * where the correction matters, it is (the ACK comes back before the next packet leaves and the
 * next sample starts with that packet); at high rates the error is a few serialisation times. The
 * result is never above the
 * transport's sample and falls back to it when the sample cannot be found in the log (more packets
 * in flight than the log holds, or a caller whose samples are not send-time based).
 *
 * <p>Primitive state, one fixed array per flow, no allocation per event.
 */
public final class SendTimeLog {
    /** Packets remembered: more in flight than this and the transport's sample is used as is. */
    public static final int CAPACITY = 256;

    private static final int MASK = CAPACITY - 1;

    private final long[] sentNs = new long[CAPACITY];
    private final int mtuBytes;
    private long sentPackets;
    private long ackedPackets;
    private long lag;

    /** A log for a flow whose full packets are acknowledged as {@code mtuBytes} each. */
    public SendTimeLog(final int mtuBytes) {
        if (mtuBytes <= 0) {
            throw new IllegalArgumentException("mtuBytes must be positive: " + mtuBytes);
        }
        this.mtuBytes = mtuBytes;
    }

    /** A packet left at {@code nowNs} (new or re-sent). */
    public void onSent(final long nowNs) {
        sentNs[(int) (sentPackets & MASK)] = nowNs;
        sentPackets++;
    }

    /**
     * Loss without a timeout (a NAK or a SACK hole): assume go-back-N, everything outstanding is
     * sent again. Under selective repeat fewer packets go again; the next sample pulls the lag back
     * within the packets its ACK covers.
     */
    public void onLoss() {
        lag = sentPackets - ackedPackets;
    }

    /** A retransmission timeout: everything outstanding is sent again. */
    public void onTimeout() {
        lag = sentPackets - ackedPackets;
    }

    /**
     * An ACK at {@code nowNs} acknowledged {@code ackedBytes} new bytes; {@code sampleRttNs} is the
     * transport's sample (-1 without one). Returns the round-trip time of the packet that triggered
     * the ACK, at most {@code sampleRttNs}; -1 without a sample.
     */
    public long onAck(final long nowNs, final long ackedBytes, final long sampleRttNs) {
        final long newly = ackedBytes <= 0 ? 0 : Math.max(1, (ackedBytes + mtuBytes - 1) / mtuBytes);
        ackedPackets += newly;
        if (sampleRttNs < 0 || newly == 0) {
            return sampleRttNs;
        }
        final long oldest = Math.max(0, sentPackets - CAPACITY);
        final long sample = find(nowNs - sampleRttNs, oldest);
        if (sample < 0) {
            return sampleRttNs;
        }
        // The sampled packet is one of the `newly` packets this ACK covers: its sequence number
        // sample - lag lies in [ackedPackets - newly, ackedPackets - 1].
        lag = Math.max(sample - (ackedPackets - 1), Math.min(sample - (ackedPackets - newly), lag));
        final long trigger = Math.max(sample, Math.min(sentPackets - 1, ackedPackets - 1 + lag));
        final long rttNs = nowNs - sentNs[(int) (trigger & MASK)];
        return Math.max(0, Math.min(sampleRttNs, rttNs));
    }

    /** Index of the first logged packet sent at {@code timeNs}, or -1. Send times never decrease. */
    private long find(final long timeNs, final long oldest) {
        long lo = oldest;
        long hi = sentPackets - 1;
        if (hi < lo || timeNs < sentNs[(int) (lo & MASK)] || timeNs > sentNs[(int) (hi & MASK)]) {
            return -1;
        }
        while (lo < hi) {
            final long mid = (lo + hi) >>> 1;
            if (sentNs[(int) (mid & MASK)] < timeNs) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return sentNs[(int) (lo & MASK)] == timeNs ? lo : -1;
    }

    /** Packets logged so far (new and re-sent). */
    public long sentPackets() {
        return sentPackets;
    }

    /** Packets acknowledged so far (cumulatively). */
    public long ackedPackets() {
        return ackedPackets;
    }

    @Override
    public String toString() {
        return "SendTimeLog[sent=" + sentPackets + ", acked=" + ackedPackets + ", lag=" + lag + "]";
    }
}
