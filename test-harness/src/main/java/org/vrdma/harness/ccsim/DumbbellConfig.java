package org.vrdma.harness.ccsim;

import org.vrdma.cc.switching.RedEcnMarker;

/**
 * Shape of a dumbbell: every sender reaches the switch over its own link, all flows share the
 * switch's egress link to the receivers, and ACKs/CNPs come back over an uncongested path.
 *
 * @param lineRateBps rate of every link
 * @param linkDelayNs propagation delay of each link
 * @param mtuBytes wire size of a full data packet
 * @param bufferBytes bottleneck buffer (tail drop beyond it)
 * @param marker ECN marking at the bottleneck
 * @param cnpIntervalNs minimum spacing of CNPs per flow at the receiver (RoCE NP)
 * @param rtoNs retransmission timeout of the senders
 * @param seed seed of all randomness
 */
public record DumbbellConfig(
        long lineRateBps,
        long linkDelayNs,
        int mtuBytes,
        long bufferBytes,
        RedEcnMarker marker,
        long cnpIntervalNs,
        long rtoNs,
        long seed) {
    /** 100 Gbit/s, 1 µs links (base RTT about 4.7 µs), 4 KB MTU, 2 MB buffer, RED 50-200 KB. */
    public static DumbbellConfig hundredGig(final long seed) {
        return new DumbbellConfig(
                100_000_000_000L,
                1_000,
                4_096,
                2L << 20,
                new RedEcnMarker(50_000, 200_000, 0.2),
                50_000,
                500_000,
                seed);
    }

    /** The same with another marker. */
    public DumbbellConfig withMarker(final RedEcnMarker newMarker) {
        return new DumbbellConfig(
                lineRateBps, linkDelayNs, mtuBytes, bufferBytes, newMarker, cnpIntervalNs, rtoNs, seed);
    }

    /** Serialisation time of {@code bytes} at line rate, rounded up. */
    long serialisationNs(final int bytes) {
        return Math.ceilDiv(bytes * 8_000_000_000L, lineRateBps);
    }

    /** Round trip of a full packet on the empty path: two serialisations, four link delays. */
    public long baseRttNs() {
        return 2 * serialisationNs(mtuBytes) + 4 * linkDelayNs;
    }
}
