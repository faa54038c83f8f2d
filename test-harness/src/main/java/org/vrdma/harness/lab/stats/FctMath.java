package org.vrdma.harness.lab.stats;

import java.util.List;
import org.vrdma.harness.lab.LinkSpec;

/**
 * The ideal flow completion time: the FCT of a flow alone on the empty network, measured like a
 * real one, from the first byte posted to the sender's completion (the ACK of the last packet).
 * Store-and-forward on every hop: the first packet crosses every hop (serialisation plus
 * propagation), the rest follow at the bottleneck rate, and the last ACK comes back over the same
 * hops.
 *
 * <pre>
 * packets  = ceil(bytes / mtu);   wire = bytes + packets * overhead
 * first    = min(bytes, mtu) + overhead
 * ideal    = sum_i (delay_i + first * 8 / rate_i)          first packet reaches the receiver
 *          + (wire - first) * 8 / min_i rate_i             the rest, at the bottleneck
 *          + sum_i (delay_i + ack * 8 / rate_i)            the last ACK back
 * slowdown = fct / ideal
 * </pre>
 */
public final class FctMath {
    private FctMath() {}

    /**
     * @param bytes flow size
     * @param mtuBytes payload per packet
     * @param overheadBytes headers per packet on the wire (inner and outer)
     * @param ackBytes an ACK's size on the wire
     * @param path the links from sender to receiver
     */
    public static long idealFctNs(long bytes, int mtuBytes, int overheadBytes, int ackBytes, List<LinkSpec> path) {
        long packets = Math.max(1, (bytes + mtuBytes - 1) / mtuBytes);
        double wire = bytes + (double) packets * overheadBytes;
        double first = Math.min(bytes, mtuBytes) + overheadBytes;
        double ns = 0;
        double minRate = Double.MAX_VALUE;
        for (LinkSpec l : path) {
            double rate = l.rateGbps(); // bits per ns
            ns += l.delayNs() + first * 8 / rate;
            ns += l.delayNs() + ackBytes * 8.0 / rate;
            minRate = Math.min(minRate, rate);
        }
        ns += (wire - first) * 8 / minRate;
        return Math.round(ns);
    }

    /** fct / ideal; -1 when the flow did not finish. */
    public static double slowdown(long fctNs, long idealFctNs) {
        if (fctNs < 0 || idealFctNs <= 0) {
            return -1;
        }
        return (double) fctNs / idealFctNs;
    }
}
