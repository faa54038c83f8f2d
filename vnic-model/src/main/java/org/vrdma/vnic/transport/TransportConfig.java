package org.vrdma.vnic.transport;

/**
 * Tunables of a device's reliable transport.
 *
 * @param lineRateBps rate of the device's link, for the default window and congestion control
 * @param baseRttNs round-trip time of the empty path, for the default window
 * @param windowBytes TX window per QP; 0 means one bandwidth-delay product
 * @param ackCoalescePackets the responder ACKs at least every this many packets (and on ackReq)
 * @param minRtoNs floor of the retransmission timeout
 * @param minProbeNs floor of the tail-loss probe's wait: how long the responder's turn may hold its
 *     ACK on a path without loss (0 in virtual time, where a deferred ACK leaves at the end of the
 *     responder's turn, at once; over real sockets the peer's event loop may lose its core)
 * @param initialRtoNs timeout before the first RTT sample (capped by the QP's timeout attribute)
 * @param infiniteTimeoutCeilingNs RTO ceiling of a QP whose timeout attribute is 0 ("infinite")
 * @param cnpIntervalNs minimum gap between two CNPs a QP sends
 * @param sackWindowPackets PSNs beyond the expected one that selective repeat tracks (power of two)
 * @param rateWindowFactory congestion control of each reliable QP
 */
public record TransportConfig(
        long lineRateBps,
        long baseRttNs,
        long windowBytes,
        int ackCoalescePackets,
        long minRtoNs,
        long minProbeNs,
        long initialRtoNs,
        long infiniteTimeoutCeilingNs,
        long cnpIntervalNs,
        int sackWindowPackets,
        RateWindowSourceFactory rateWindowFactory) {

    /** 100 Gbit/s, 10 µs RTT, one-BDP window, ACK every 4 packets, RTO 100 µs..QP timeout, no probe floor, CNP 50 µs. */
    public static TransportConfig defaults() {
        return new TransportConfig(
                100_000_000_000L,
                10_000,
                0,
                4,
                100_000,
                0,
                1_000_000,
                1_000_000_000,
                50_000,
                4096,
                RateWindowSourceFactory.staticWindow());
    }

    /** The window in bytes: {@link #windowBytes} or one BDP. */
    public long effectiveWindowBytes() {
        return windowBytes > 0 ? windowBytes : Math.max(4096, (long) (lineRateBps * (double) baseRttNs / 8e9));
    }

    /** Copy with another window. */
    public TransportConfig withWindowBytes(final long v) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                v,
                ackCoalescePackets,
                minRtoNs,
                minProbeNs,
                initialRtoNs,
                infiniteTimeoutCeilingNs,
                cnpIntervalNs,
                sackWindowPackets,
                rateWindowFactory);
    }

    /** Copy with another RTO floor and initial RTO. */
    public TransportConfig withRto(final long minNs, final long initialNs) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                windowBytes,
                ackCoalescePackets,
                minNs,
                minProbeNs,
                initialNs,
                infiniteTimeoutCeilingNs,
                cnpIntervalNs,
                sackWindowPackets,
                rateWindowFactory);
    }

    /** Copy with another floor of the tail-loss probe's wait. */
    public TransportConfig withMinProbeNs(final long v) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                windowBytes,
                ackCoalescePackets,
                minRtoNs,
                v,
                initialRtoNs,
                infiniteTimeoutCeilingNs,
                cnpIntervalNs,
                sackWindowPackets,
                rateWindowFactory);
    }

    /** Copy with another ACK coalescing count. */
    public TransportConfig withAckCoalescePackets(final int v) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                windowBytes,
                v,
                minRtoNs,
                minProbeNs,
                initialRtoNs,
                infiniteTimeoutCeilingNs,
                cnpIntervalNs,
                sackWindowPackets,
                rateWindowFactory);
    }

    /** Copy with another CNP interval. */
    public TransportConfig withCnpIntervalNs(final long v) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                windowBytes,
                ackCoalescePackets,
                minRtoNs,
                minProbeNs,
                initialRtoNs,
                infiniteTimeoutCeilingNs,
                v,
                sackWindowPackets,
                rateWindowFactory);
    }

    /** Copy with another congestion control. */
    public TransportConfig withRateWindowFactory(final RateWindowSourceFactory v) {
        return new TransportConfig(
                lineRateBps,
                baseRttNs,
                windowBytes,
                ackCoalescePackets,
                minRtoNs,
                minProbeNs,
                initialRtoNs,
                infiniteTimeoutCeilingNs,
                cnpIntervalNs,
                sackWindowPackets,
                v);
    }
}
