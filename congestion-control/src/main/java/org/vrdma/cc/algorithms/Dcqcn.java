package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.SimpleProvider;

/**
 * DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
 * 2015), with the timers of RoCE NICs.
 *
 * <ul>
 *   <li>On a CNP the current rate Rc is cut to {@code Rc * (1 - alpha/2)} and the target rate Rt
 *       remembers the rate before the cut; cuts happen at most once per {@code minCutIntervalNs}
 *       (a CNP inside the interval is applied when it ends).
 *   <li>alpha is updated every {@code alphaUpdatePeriodNs}: {@code alpha = (1-g) alpha + g} if a CNP
 *       arrived in the period, {@code (1-g) alpha} otherwise. It starts at 1 on the first CNP.
 *   <li>After a cut, the rate-increase timer ({@code rateIncreasePeriodNs}) and the byte counter
 *       ({@code byteCounterBytes} sent) each count stages. For the first F stages, fast recovery sets
 *       {@code Rc = (Rt + Rc)/2}; once either counter has passed F, additive increase first raises
 *       Rt by Rai; once both have, hyper increase raises Rt by {@code i * Rhai} at the i-th stage
 *       past F. Without a byte counter the timer alone counts: F fast-recovery stages, one additive
 *       stage, then hyper increase.
 * </ul>
 *
 * alpha decays lazily: periods without CNPs are folded in on the next event, so an idle flow needs
 * no alpha timer. Loss and timeouts do not change the rate (see {@link #onLoss}).
 *
 * <p>Defaults: the paper's timers (K = T = 55 µs, N = 50 µs, F = 5, g = 1/256) with the increase
 * steps the published simulations ran them with: Rai = line rate / 5000 and Rhai = line rate / 500
 * (20 and 200 Mbit/s at 100 Gbit/s: the HPCC simulator's {@code run.py}, {@code 5·bw/25} and
 * {@code 50·bw/25} Mb/s, also for its {@code dcqcn_paper} variant) and no byte counter (that
 * simulator has none; the DCQCN authors' ns-3 configuration sets it to 300 MB, which no flow
 * completes). With the 5 Mbit/s of the ConnectX firmware and a 10 MB byte counter, a flow cut to
 * 1 Gbit/s by a burst of CNPs needs 80 ms per byte stage before hyper increase and crawls at
 * +5 Mbit/s per 55 µs meanwhile (the firmware pairs 5 Mbit/s with a 300 µs timer and F = 1).
 */
public final class Dcqcn implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "dcqcn";

    /** Line rate over the derived Rai: 20 Mbit/s at 100 Gbit/s (HPCC ns-3 {@code run.py}: 5·bw/25 Mb/s). */
    static final double RAI_PER_LINE_RATE = 5_000;

    /** Line rate over the derived Rhai: 200 Mbit/s at 100 Gbit/s (HPCC ns-3 {@code run.py}: 50·bw/25 Mb/s). */
    static final double RHAI_PER_LINE_RATE = 500;

    private final Config config;
    private final long lineRateBps;
    private final double raiBps;
    private final double rhaiBps;

    private double currentRateBps;
    private double targetRateBps;
    private double alpha = 1.0;
    private boolean cnpSeen;
    private boolean cnpInAlphaPeriod;
    private long alphaPeriodEndNs;
    private long lastCutNs;
    private boolean cutPending;
    private int timerStage;
    private int byteStage;
    private long bytesSinceStage;
    private long nextIncreaseNs = NO_TIMER;
    private long cachedRateBps;

    /** Creates the reaction point of one flow, starting at line rate. */
    public Dcqcn(final FlowContext flow, final Config config) {
        this.config = config;
        this.lineRateBps = flow.lineRateBps();
        this.raiBps = config.raiBps > 0 ? config.raiBps : Math.max(1.0, lineRateBps / RAI_PER_LINE_RATE);
        this.rhaiBps = config.rhaiBps > 0 ? config.rhaiBps : Math.max(1.0, lineRateBps / RHAI_PER_LINE_RATE);
        this.currentRateBps = lineRateBps;
        this.targetRateBps = lineRateBps;
        this.cachedRateBps = lineRateBps;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes) {
        if (config.byteCounterBytes == 0 || !cnpSeen || isAtLineRate()) {
            return;
        }
        bytesSinceStage += bytes;
        if (bytesSinceStage >= config.byteCounterBytes) {
            bytesSinceStage -= config.byteCounterBytes;
            byteStage++;
            increase();
        }
    }

    @Override
    public void onCnp(final long nowNs) {
        if (!cnpSeen) {
            cnpSeen = true;
            alpha = config.initialAlpha;
            alphaPeriodEndNs = nowNs + config.alphaUpdatePeriodNs;
            cut(nowNs);
            return;
        }
        advanceAlpha(nowNs);
        cnpInAlphaPeriod = true;
        if (nowNs - lastCutNs >= config.minCutIntervalNs) {
            cut(nowNs);
        } else {
            cutPending = true;
        }
    }

    /**
     * No reaction: the DCQCN reaction point acts on CNPs only. The paper assumes a lossless (PFC)
     * fabric, and a RoCE NIC repairs loss in its transport (go-back-N from the NAK's PSN) without
     * touching the rate, as the NIC model of the HPCC simulator does on a NAK; the next CNPs report
     * the congestion that caused the loss.
     */
    @Override
    public void onLoss(final long nowNs, final long lostBytes) {}

    /** No reaction, as for {@link #onLoss}: a retransmission timeout changes neither rate nor alpha. */
    @Override
    public void onTimeout(final long nowNs) {}

    @Override
    public void onTimer(final long nowNs) {
        if (!cnpSeen) {
            return;
        }
        advanceAlpha(nowNs);
        if (cutPending && nowNs - lastCutNs >= config.minCutIntervalNs) {
            cut(nowNs);
        }
        // Stages missed by a late timer are applied one by one, as the NIC would have.
        while (nextIncreaseNs <= nowNs) {
            nextIncreaseNs += config.rateIncreasePeriodNs;
            timerStage++;
            increase();
            if (isAtLineRate()) {
                nextIncreaseNs = NO_TIMER;
            }
        }
    }

    @Override
    public long rateBps() {
        return cachedRateBps;
    }

    @Override
    public long nextTimerNs() {
        final long cutNs = cutPending ? lastCutNs + config.minCutIntervalNs : NO_TIMER;
        return Math.min(cutNs, nextIncreaseNs);
    }

    /** alpha as of the last event. */
    public double alpha() {
        return alpha;
    }

    /** Additive-increase step in use (configured or derived from the line rate). */
    public double raiBps() {
        return raiBps;
    }

    /** Hyper-increase step in use (configured or derived from the line rate). */
    public double rhaiBps() {
        return rhaiBps;
    }

    /** The target rate Rt. */
    public long targetRateBps() {
        return (long) targetRateBps;
    }

    /** Rate-increase stages counted by the timer since the last cut. */
    public int timerStage() {
        return timerStage;
    }

    /** Rate-increase stages counted by the byte counter since the last cut. */
    public int byteStage() {
        return byteStage;
    }

    private void cut(final long nowNs) {
        if (config.clampTargetRate || timerStage != 0 || byteStage != 0) {
            targetRateBps = currentRateBps;
        }
        currentRateBps = Math.max(config.minRateBps, currentRateBps * (1 - alpha / 2));
        lastCutNs = nowNs;
        cutPending = false;
        timerStage = 0;
        byteStage = 0;
        bytesSinceStage = 0;
        nextIncreaseNs = nowNs + config.rateIncreasePeriodNs;
        publish();
    }

    private void increase() {
        final int f = config.fastRecoveryStages;
        final boolean byteCounter = config.byteCounterBytes != 0;
        final int stage = byteCounter ? Math.max(timerStage, byteStage) : timerStage;
        // With the byte counter, hyper increase needs both counters past F; without it, the timer alone.
        final int hyperSteps = byteCounter ? Math.min(timerStage, byteStage) - f : timerStage - f - 1;
        if (stage <= f) {
            // Fast recovery: only halve the distance to the rate before the cut.
        } else if (hyperSteps <= 0) {
            targetRateBps += raiBps;
        } else {
            targetRateBps += hyperSteps * rhaiBps;
        }
        targetRateBps = Math.min(targetRateBps, lineRateBps);
        currentRateBps = (targetRateBps + currentRateBps) / 2;
        // Within a bit per second of the target: snap, so a recovered flow stops its timer.
        if (targetRateBps - currentRateBps < 1.0) {
            currentRateBps = targetRateBps;
        }
        publish();
    }

    private void advanceAlpha(final long nowNs) {
        if (nowNs < alphaPeriodEndNs) {
            return;
        }
        final double g = config.g;
        alpha = (1 - g) * alpha + (cnpInAlphaPeriod ? g : 0);
        cnpInAlphaPeriod = false;
        final long quietPeriods = (nowNs - alphaPeriodEndNs) / config.alphaUpdatePeriodNs;
        if (quietPeriods > 0) {
            alpha *= Math.pow(1 - g, quietPeriods);
        }
        alphaPeriodEndNs += (quietPeriods + 1) * config.alphaUpdatePeriodNs;
    }

    private boolean isAtLineRate() {
        return currentRateBps >= lineRateBps;
    }

    private void publish() {
        cachedRateBps = Math.max(1, Math.min(lineRateBps, (long) currentRateBps));
    }

    @Override
    public String toString() {
        return "Dcqcn[rc=" + (long) currentRateBps + ", rt=" + (long) targetRateBps + ", alpha=" + alpha + "]";
    }

    /** Parameters of {@link Dcqcn}; defaults: the paper's timers, the published simulations' increase steps. */
    public static final class Config implements CcConfig {
        private double g = 1.0 / 256;
        private double initialAlpha = 1.0;
        private long alphaUpdatePeriodNs = 55_000;
        private long rateIncreasePeriodNs = 55_000;
        // Off, as in both published DCQCN simulators (see the class comment); the paper's B = 10 MB
        // gates hyper increase behind 50 MB sent after every cut.
        private long byteCounterBytes = 0;
        private int fastRecoveryStages = 5;
        // 0: derived from the line rate (RAI_PER_LINE_RATE, RHAI_PER_LINE_RATE).
        private long raiBps = 0;
        private long rhaiBps = 0;
        private long minRateBps = 100_000_000;
        private long minCutIntervalNs = 50_000;
        private boolean clampTargetRate = true;

        /** EWMA gain of alpha. */
        public double g() {
            return g;
        }

        /** Sets {@link #g()}. */
        public Config g(final double g) {
            this.g = g;
            return this;
        }

        /** alpha at the first CNP. */
        public double initialAlpha() {
            return initialAlpha;
        }

        /** Period of the alpha update timer (K). */
        public long alphaUpdatePeriodNs() {
            return alphaUpdatePeriodNs;
        }

        /** Sets {@link #alphaUpdatePeriodNs()}. */
        public Config alphaUpdatePeriodNs(final long ns) {
            this.alphaUpdatePeriodNs = ns;
            return this;
        }

        /** Period of the rate-increase timer (T). */
        public long rateIncreasePeriodNs() {
            return rateIncreasePeriodNs;
        }

        /** Sets {@link #rateIncreasePeriodNs()}. */
        public Config rateIncreasePeriodNs(final long ns) {
            this.rateIncreasePeriodNs = ns;
            return this;
        }

        /** Bytes per byte-counter stage (B); 0 disables the byte counter, as many NICs do. */
        public long byteCounterBytes() {
            return byteCounterBytes;
        }

        /** Sets {@link #byteCounterBytes()}. */
        public Config byteCounterBytes(final long bytes) {
            this.byteCounterBytes = bytes;
            return this;
        }

        /** Stages of fast recovery (F). */
        public int fastRecoveryStages() {
            return fastRecoveryStages;
        }

        /** Sets {@link #fastRecoveryStages()}. */
        public Config fastRecoveryStages(final int stages) {
            this.fastRecoveryStages = stages;
            return this;
        }

        /** Additive-increase step of the target rate (Rai); 0 = line rate / 5000. */
        public long raiBps() {
            return raiBps;
        }

        /** Sets {@link #raiBps()}. */
        public Config raiBps(final long bps) {
            this.raiBps = bps;
            return this;
        }

        /** Hyper-increase step of the target rate (Rhai); 0 = line rate / 500. */
        public long rhaiBps() {
            return rhaiBps;
        }

        /** Sets {@link #rhaiBps()}. */
        public Config rhaiBps(final long bps) {
            this.rhaiBps = bps;
            return this;
        }

        /** Floor of the current rate. */
        public long minRateBps() {
            return minRateBps;
        }

        /** Sets {@link #minRateBps()}. */
        public Config minRateBps(final long bps) {
            this.minRateBps = bps;
            return this;
        }

        /** Minimum time between two rate cuts (the NP's CNP interval N). */
        public long minCutIntervalNs() {
            return minCutIntervalNs;
        }

        /** Sets {@link #minCutIntervalNs()}. */
        public Config minCutIntervalNs(final long ns) {
            this.minCutIntervalNs = ns;
            return this;
        }

        /** Whether every cut sets Rt to Rc (paper); false keeps Rt on cuts during fast recovery. */
        public boolean clampTargetRate() {
            return clampTargetRate;
        }

        @Override
        public void validate() {
            CcConfig.requireOpenClosed(g, 0, 1, "g");
            CcConfig.requireOpenClosed(initialAlpha, 0, 1, "initialAlpha");
            CcConfig.requirePositive(alphaUpdatePeriodNs, "alphaUpdatePeriodNs");
            CcConfig.requirePositive(rateIncreasePeriodNs, "rateIncreasePeriodNs");
            CcConfig.requireNonNegative(byteCounterBytes, "byteCounterBytes");
            CcConfig.requireNonNegative(fastRecoveryStages, "fastRecoveryStages");
            CcConfig.requireNonNegative(raiBps, "raiBps");
            CcConfig.requireNonNegative(rhaiBps, "rhaiBps");
            CcConfig.requirePositive(minRateBps, "minRateBps");
            CcConfig.requireNonNegative(minCutIntervalNs, "minCutIntervalNs");
        }
    }

    /** Registers {@link Dcqcn} as {@value #NAME}. */
    public static final class Provider extends SimpleProvider<Config> {
        public Provider() {
            super(NAME, Config.class, Dcqcn::new);
        }
    }
}
