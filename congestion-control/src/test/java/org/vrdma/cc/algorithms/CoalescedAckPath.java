package org.vrdma.cc.algorithms;

import java.util.ArrayDeque;
import java.util.Random;
import org.vrdma.cc.CongestionControl;

/**
 * A virtual-time test path for one backlogged flow, modelled on how the vNIC's RC requester and
 * responder drive congestion control: packets paced at the algorithm's rate (and window), one RTT
 * sample outstanding at a time (the next new packet after the previous sample ended, never a
 * re-sent one), an RTO of twice the smoothed sample (at least 100 µs, doubling per timeout), a
 * receiver that ACKs every {@code ackEvery} in-order packets and drops anything out
 * of order (go-back-N), a retransmission timeout that re-sends from the first unacknowledged packet.
 * The path adds a seeded jitter to its base RTT, a queueing delay per phase and drops every packet
 * sent inside a loss episode. Packets are sent as {@code mtu + headerBytes} wire bytes and ACKed as
 * {@code mtu} each, as the requester reports them.
 */
final class CoalescedAckPath {
    private final CongestionControl cc;
    private final int mtuBytes;
    private final int wireBytes;
    private final int ackEvery;
    private final long baseRttNs;
    private long rtoNs = 1_000_000;
    private double srttNs;
    private final Random random;

    private long nowNs;
    private long nextSeq;
    private long una;
    private long receiverNext;
    private int unacked;
    private long nextDepartureNs;
    private long lastProgressNs;
    private boolean sampling;
    private long sampleSeq;
    private long sampleSentNs;
    private long maxSentSeq = -1;
    private long queueDelayNs;
    private long lossFromNs = Long.MAX_VALUE;
    private long lossToNs = Long.MIN_VALUE;
    private long lastRawSampleNs = -1;
    private long bytesAcked;
    private final ArrayDeque<long[]> acks = new ArrayDeque<>(); // {arrivalNs, cumulative seq}

    CoalescedAckPath(
            final CongestionControl cc,
            final int mtuBytes,
            final int headerBytes,
            final int ackEvery,
            final long baseRttNs,
            final long seed) {
        this.cc = cc;
        this.mtuBytes = mtuBytes;
        this.wireBytes = mtuBytes + headerBytes;
        this.ackEvery = ackEvery;
        this.baseRttNs = baseRttNs;
        this.random = new Random(seed);
    }

    /** Queueing delay added to every packet sent from now on. */
    CoalescedAckPath queueDelayNs(final long ns) {
        this.queueDelayNs = ns;
        return this;
    }

    /** Every packet sent in {@code [fromNs, toNs)} is dropped. */
    CoalescedAckPath lossEpisode(final long fromNs, final long toNs) {
        this.lossFromNs = fromNs;
        this.lossToNs = toNs;
        return this;
    }

    long nowNs() {
        return nowNs;
    }

    long bytesAcked() {
        return bytesAcked;
    }

    /** The last RTT sample as the transport measured it (ACK coalescing included). */
    long lastRawSampleNs() {
        return lastRawSampleNs;
    }

    /** Runs until {@code untilNs}. */
    void runUntil(final long untilNs) {
        while (true) {
            final long windowPackets = Math.max(1, cc.windowBytes() / mtuBytes);
            final boolean canSend = nextSeq - una < windowPackets;
            final long departNs = canSend ? Math.max(nowNs, nextDepartureNs) : Long.MAX_VALUE;
            final long ackNs = acks.isEmpty() ? Long.MAX_VALUE : acks.peekFirst()[0];
            final long rtoAtNs = una < nextSeq ? lastProgressNs + rtoNs : Long.MAX_VALUE;
            final long next = Math.min(departNs, Math.min(ackNs, rtoAtNs));
            if (next >= untilNs) {
                nowNs = untilNs;
                return;
            }
            nowNs = next;
            if (next == ackNs) {
                onAck(acks.pollFirst()[1]);
            } else if (next == rtoAtNs) {
                onTimeout();
            } else {
                send();
            }
        }
    }

    private void send() {
        final long seq = nextSeq++;
        final boolean retx = seq <= maxSentSeq;
        maxSentSeq = Math.max(maxSentSeq, seq);
        if (una == seq) {
            lastProgressNs = nowNs;
        }
        if (retx) {
            if (sampling && sampleSeq == seq) {
                sampling = false;
            }
        } else if (!sampling) {
            sampling = true;
            sampleSeq = seq;
            sampleSentNs = nowNs;
        }
        cc.onPacketSent(nowNs, wireBytes);
        nextDepartureNs = Math.max(nowNs, nextDepartureNs) + (long) (wireBytes * 8e9 / cc.rateBps());
        if (nowNs >= lossFromNs && nowNs < lossToNs) {
            return;
        }
        final long jitterNs = (long) (random.nextDouble() * baseRttNs / 10);
        final long arriveNs = nowNs + baseRttNs / 2 + queueDelayNs + jitterNs;
        if (seq != receiverNext) {
            return; // go-back-N receiver: out of order is dropped
        }
        receiverNext++;
        if (++unacked >= ackEvery) {
            unacked = 0;
            final long ackAtNs = arriveNs + baseRttNs / 2;
            final long last = acks.isEmpty() ? Long.MIN_VALUE : acks.peekLast()[0];
            acks.addLast(new long[] {Math.max(ackAtNs, last), receiverNext});
        }
    }

    private void onAck(final long cumulative) {
        if (cumulative <= una) {
            return;
        }
        final long newly = cumulative - una;
        una = cumulative;
        lastProgressNs = nowNs;
        long rttNs = -1;
        if (sampling && sampleSeq < cumulative) {
            rttNs = nowNs - sampleSentNs;
            lastRawSampleNs = rttNs;
            srttNs = srttNs == 0 ? rttNs : 0.875 * srttNs + 0.125 * rttNs;
            rtoNs = Math.max(100_000, (long) (2 * srttNs));
            sampling = false;
        }
        bytesAcked += newly * mtuBytes;
        cc.onAck(nowNs, newly * mtuBytes, rttNs, false);
    }

    private void onTimeout() {
        cc.onTimeout(nowNs);
        rtoNs = Math.min(64_000_000, 2 * rtoNs);
        sampling = false;
        nextSeq = una;
        receiverNext = una;
        unacked = 0;
        acks.clear();
        lastProgressNs = nowNs;
    }
}
