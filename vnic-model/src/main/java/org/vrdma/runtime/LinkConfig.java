package org.vrdma.runtime;

/**
 * Parameters of a modelled point-to-point link.
 *
 * @param rateBps serialisation rate in bits per second
 * @param propagationDelayNs one-way propagation delay
 * @param queueCapacityBytes transmit queue; frames that do not fit are tail-dropped
 * @param lossProbability probability that a frame is lost on the wire, in [0, 1]
 */
public record LinkConfig(long rateBps, long propagationDelayNs, long queueCapacityBytes, double lossProbability) {
    public LinkConfig {
        if (rateBps <= 0) {
            throw new IllegalArgumentException("rateBps must be positive: " + rateBps);
        }
        if (propagationDelayNs < 0) {
            throw new IllegalArgumentException("propagationDelayNs must not be negative: " + propagationDelayNs);
        }
        if (queueCapacityBytes <= 0) {
            throw new IllegalArgumentException("queueCapacityBytes must be positive: " + queueCapacityBytes);
        }
        checkProbability(lossProbability);
    }

    static void checkProbability(double p) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw new IllegalArgumentException("lossProbability must be in [0, 1]: " + p);
        }
    }

    /** A lossless link with the given rate and delay and a 1 MiB queue. */
    public static LinkConfig of(long rateBps, long propagationDelayNs) {
        return new LinkConfig(rateBps, propagationDelayNs, 1L << 20, 0.0);
    }

    public LinkConfig withLossProbability(double p) {
        return new LinkConfig(rateBps, propagationDelayNs, queueCapacityBytes, p);
    }

    public LinkConfig withQueueCapacityBytes(long bytes) {
        return new LinkConfig(rateBps, propagationDelayNs, bytes, lossProbability);
    }
}
