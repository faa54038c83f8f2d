package org.vrdma.vnic.transport;

/** Creates the {@link RateWindowSource} of each reliable queue pair a device creates. */
@FunctionalInterface
public interface RateWindowSourceFactory {
    /**
     * @param qpNum the queue pair
     * @param lineRateBps rate of the device's link
     * @param baseRttNs round-trip time of the empty path
     * @param defaultWindowBytes the device's configured window (about one BDP)
     */
    RateWindowSource create(int qpNum, long lineRateBps, long baseRttNs, long defaultWindowBytes);

    /** Static sources: unpaced, with the device's default window. */
    static RateWindowSourceFactory staticWindow() {
        return (qpNum, lineRateBps, baseRttNs, defaultWindowBytes) ->
                new StaticRateWindow(RateWindowSource.UNLIMITED_RATE, defaultWindowBytes);
    }
}
