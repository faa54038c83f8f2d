package org.vrdma.vnic.transport;

import org.vrdma.cc.ConfiguredAlgorithm;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;

/**
 * A queue pair's rate and window from a congestion-control algorithm of the congestion-control
 * module (DCQCN, TIMELY, Swift, HPCC, DCTCP, static, or a plug-in): every transport event is handed
 * on as it happens, and the algorithm's rate and window are read back by the {@link TxWindow}.
 */
public final class CongestionControlSource implements RateWindowSource {
    private final CongestionControl cc;

    public CongestionControlSource(CongestionControl cc) {
        this.cc = cc;
    }

    /**
     * A factory giving each queue pair its own instance of {@code algorithm}, seeded by the QP
     * number, for a path of {@code mtuBytes}.
     */
    public static RateWindowSourceFactory factory(ConfiguredAlgorithm algorithm, int mtuBytes) {
        return (qpNum, lineRateBps, baseRttNs, defaultWindowBytes) -> new CongestionControlSource(algorithm.create(
                new FlowContext(lineRateBps, baseRttNs, mtuBytes, Math.max(mtuBytes, defaultWindowBytes), qpNum)));
    }

    /** The algorithm behind this source. */
    public CongestionControl algorithm() {
        return cc;
    }

    @Override
    public long rateBps() {
        return cc.rateBps();
    }

    @Override
    public long windowBytes() {
        long w = cc.windowBytes();
        return w == CongestionControl.UNLIMITED_WINDOW ? UNLIMITED_WINDOW : w;
    }

    @Override
    public void onPacketSent(long nowNs, int bytes) {
        cc.onPacketSent(nowNs, bytes);
    }

    @Override
    public void onAck(long nowNs, long ackedBytes, long rttNs, boolean ecnEcho) {
        cc.onAck(nowNs, ackedBytes, rttNs, ecnEcho);
    }

    @Override
    public void onCnp(long nowNs) {
        cc.onCnp(nowNs);
    }

    @Override
    public void onLoss(long nowNs, long lostBytes) {
        cc.onLoss(nowNs, lostBytes);
    }

    @Override
    public void onTimeout(long nowNs) {
        cc.onTimeout(nowNs);
    }

    @Override
    public void onSpuriousTimeout(long nowNs) {
        cc.onSpuriousTimeout(nowNs);
    }

    @Override
    public void onResend(long nowNs) {
        cc.onResend(nowNs);
    }

    @Override
    public void onTimer(long nowNs) {
        cc.onTimer(nowNs);
    }

    @Override
    public long nextTimerNs() {
        long t = cc.nextTimerNs();
        return t == CongestionControl.NO_TIMER ? NO_TIMER : t;
    }
}
