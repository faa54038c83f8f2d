package org.vrdma.vnic.verbs;

import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * One packet in flight at line rate (HPCC's window in an incast); counts what congestion control
 * hears of: resends, timeouts and timeouts found spurious.
 */
final class OnePacketWindow implements RateWindowSource {
    int resends;
    int timeouts;
    int spurious;

    /** A transport whose QPs each get a one-packet window; the first one made lands in {@code first[0]}. */
    static TransportConfig config(final OnePacketWindow[] first) {
        return TransportConfig.defaults().withRateWindowFactory((qpn, line, rtt, window) -> {
            OnePacketWindow w = new OnePacketWindow();
            if (first[0] == null) {
                first[0] = w;
            }
            return w;
        });
    }

    @Override
    public long rateBps() {
        return 100_000_000_000L;
    }

    @Override
    public long windowBytes() {
        return 4096;
    }

    @Override
    public void onResend(final long nowNs) {
        resends++;
    }

    @Override
    public void onTimeout(final long nowNs) {
        timeouts++;
    }

    @Override
    public void onSpuriousTimeout(final long nowNs) {
        spurious++;
    }
}
