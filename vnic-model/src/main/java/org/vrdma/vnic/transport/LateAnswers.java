package org.vrdma.vnic.transport;

/**
 * How late an answer comes on a path with nothing lost: the longest round trip that outran a
 * tail-loss probe or a retransmission timeout and was then shown to be the original's (a
 * duplicate ACK answered the resent copy), plus a quarter, as the next pause of the same kind is
 * rarely exactly as long. A queue that grows by megabytes within one round trip (an incast's new
 * flows starting at line rate) or a peer whose event loop loses its core delays answers far beyond
 * what the smoothed round trip of the calm samples before predicts; the requester's timers go no
 * sooner than this. A sample of at least half of it keeps it (such pauses still happen, and the
 * timers waited for this one); {@link #DECAY_SAMPLES} shorter samples in a row halve it, so a spike
 * long past stops holding back the recovery of a real loss.
 *
 * <p>One per device, shared by its QPs like the device's path RTT: a connection per flow meets
 * the pauses its predecessors met on the same host, and times out only once per host instead of
 * once per flow.
 */
public final class LateAnswers {
    /** Shorter samples in a row that halve the allowance. */
    public static final int DECAY_SAMPLES = 64;

    private long allowanceNs;
    private int shorterSamples;

    /** An original's round trip {@code rttNs} outran a probe or timeout (Eifel-confirmed). */
    public void onLateAnswer(final long rttNs) {
        allowanceNs = Math.max(allowanceNs, rttNs + rttNs / 4);
        shorterSamples = 0;
    }

    /** An RTT sample of a packet sent once. */
    public void onRttSample(final long rttNs) {
        if (allowanceNs == 0) {
            return;
        }
        if (2 * rttNs >= allowanceNs) {
            allowanceNs = Math.max(allowanceNs, rttNs + rttNs / 4);
            shorterSamples = 0;
        } else if (++shorterSamples >= DECAY_SAMPLES) {
            allowanceNs /= 2;
            shorterSamples = 0;
        }
    }

    /** The least time a probe or timeout waits for an answer; 0 before any late answer. */
    public long allowanceNs() {
        return allowanceNs;
    }
}
