package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One direction of a link as an egress port sees it (both directions of a topology link get the
 * same spec): serialisation rate, propagation delay, buffer with tail drop, RED/ECN marking and
 * faults. Omitted fields take the values of {@link #DEFAULT} (100 Gbit/s, 1 µs, 1 MiB, no ECN, no
 * faults).
 *
 * @param rateGbps link rate in Gbit/s
 * @param delayNs one-way propagation delay
 * @param bufferBytes egress buffer; packets that do not fit are tail-dropped
 * @param ecn RED/ECN marking thresholds, or null for none
 * @param faults faults on data packets leaving this port
 * @param controlFaults faults on control packets (ACK/NAK/CNP) leaving this port; null: none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LinkSpec(
        Double rateGbps, Long delayNs, Long bufferBytes, EcnSpec ecn, FaultSpec faults, FaultSpec controlFaults) {

    public static final LinkSpec DEFAULT = new LinkSpec(100.0, 1_000L, 1L << 20, null, null, null);

    /** Fields left out here are taken from {@code base}. */
    public LinkSpec over(LinkSpec base) {
        return new LinkSpec(
                rateGbps != null ? rateGbps : base.rateGbps,
                delayNs != null ? delayNs : base.delayNs,
                bufferBytes != null ? bufferBytes : base.bufferBytes,
                ecn != null ? ecn : base.ecn,
                faults != null ? faults : base.faults,
                controlFaults != null ? controlFaults : base.controlFaults);
    }

    /** The rate in bit/s. */
    public long rateBps() {
        return Math.round(rateGbps * 1e9);
    }

    /**
     * RED/ECN marking on the queue length at arrival: no marks below {@code kMinBytes}, probability
     * rising linearly to {@code pMax} at {@code kMaxBytes}, every packet marked above it.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record EcnSpec(Long kMinBytes, Long kMaxBytes, Double pMax) {}

    /**
     * Seeded faults of packets leaving a port.
     *
     * @param loss independent random loss probability
     * @param burstLoss long-run loss rate of Gilbert-Elliott burst loss (with {@code meanBurstPackets})
     * @param meanBurstPackets mean length of a loss burst
     * @param duplicate probability a packet is delivered twice
     * @param reorder probability a packet is held back by {@code reorderDelayNs}
     * @param reorderDelayNs how long a reordered packet is held
     * @param jitterNs extra uniform delay in [0, jitterNs]
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FaultSpec(
            Double loss,
            Double burstLoss,
            Double meanBurstPackets,
            Double duplicate,
            Double reorder,
            Long reorderDelayNs,
            Long jitterNs) {
        public static FaultSpec randomLoss(double p) {
            return new FaultSpec(p, null, null, null, null, null, null);
        }
    }
}
