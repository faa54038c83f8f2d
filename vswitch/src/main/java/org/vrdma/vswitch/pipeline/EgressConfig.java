package org.vrdma.vswitch.pipeline;

import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FaultConfig;

/**
 * What an {@link EgressPort} emulates.
 *
 * @param rateBps link rate; 0 = unlimited (no queueing, packets leave at once)
 * @param bufferBytes queue capacity; packets that do not fit are tail-dropped
 * @param ecnMarker RED/ECN marking on the queue length at arrival, or null for none
 * @param intStamping whether departing packets that carry an {@link IntOption} get a hop record
 * @param dataFaults faults for data packets (everything but RoCE ACK/NAK, atomic ACK and CNP)
 * @param controlFaults faults for control packets (RoCE ACK/NAK, atomic ACK, CNP)
 */
public record EgressConfig(
        long rateBps,
        long bufferBytes,
        RedEcnMarker ecnMarker,
        boolean intStamping,
        FaultConfig dataFaults,
        FaultConfig controlFaults) {
    /** Unlimited rate, 4 MiB buffer, no marking, INT stamping on, no faults. */
    public static final EgressConfig DEFAULT =
            new EgressConfig(0, 4 << 20, null, true, FaultConfig.NONE, FaultConfig.NONE);

    public EgressConfig {
        if (rateBps < 0 || bufferBytes <= 0) {
            throw new IllegalArgumentException("rateBps " + rateBps + ", bufferBytes " + bufferBytes);
        }
        if (dataFaults == null || controlFaults == null) {
            throw new IllegalArgumentException("fault configs must not be null (use FaultConfig.NONE)");
        }
    }

    public static EgressConfig of(long rateBps, long bufferBytes) {
        return DEFAULT.withRate(rateBps).withBufferBytes(bufferBytes);
    }

    public EgressConfig withRate(long bps) {
        return new EgressConfig(bps, bufferBytes, ecnMarker, intStamping, dataFaults, controlFaults);
    }

    public EgressConfig withBufferBytes(long bytes) {
        return new EgressConfig(rateBps, bytes, ecnMarker, intStamping, dataFaults, controlFaults);
    }

    public EgressConfig withEcn(RedEcnMarker marker) {
        return new EgressConfig(rateBps, bufferBytes, marker, intStamping, dataFaults, controlFaults);
    }

    public EgressConfig withIntStamping(boolean on) {
        return new EgressConfig(rateBps, bufferBytes, ecnMarker, on, dataFaults, controlFaults);
    }

    public EgressConfig withDataFaults(FaultConfig faults) {
        return new EgressConfig(rateBps, bufferBytes, ecnMarker, intStamping, faults, controlFaults);
    }

    public EgressConfig withControlFaults(FaultConfig faults) {
        return new EgressConfig(rateBps, bufferBytes, ecnMarker, intStamping, dataFaults, faults);
    }
}
