package org.vrdma.cc.algorithms;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.CongestionControlProvider;
import org.vrdma.cc.FlowContext;

/**
 * No congestion control: a fixed rate and a fixed window whatever the network says. The baseline
 * every experiment compares against, and what a QP uses when CC is switched off.
 */
public final class StaticRate implements CongestionControl {
    /** Registered name. */
    public static final String NAME = "static";

    private final long rateBps;
    private final long windowBytes;

    /** Creates the static control of one flow. */
    public StaticRate(final FlowContext flow, final Config config) {
        this.rateBps = config.rateBps == 0 ? flow.lineRateBps() : Math.min(config.rateBps, flow.lineRateBps());
        this.windowBytes = config.windowBytes == 0 ? UNLIMITED_WINDOW : config.windowBytes;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public long rateBps() {
        return rateBps;
    }

    @Override
    public long windowBytes() {
        return windowBytes;
    }

    @Override
    public String toString() {
        return "StaticRate[rateBps=" + rateBps + ", windowBytes=" + windowBytes + "]";
    }

    /** Configuration of {@link StaticRate}. */
    public static final class Config implements CcConfig {
        private long rateBps;
        private long windowBytes;

        /** Sending rate; 0 (default) means the line rate. */
        public long rateBps() {
            return rateBps;
        }

        /** Sets {@link #rateBps()}. */
        public Config rateBps(final long rateBps) {
            this.rateBps = rateBps;
            return this;
        }

        /** Window; 0 (default) means unlimited. */
        public long windowBytes() {
            return windowBytes;
        }

        /** Sets {@link #windowBytes()}. */
        public Config windowBytes(final long windowBytes) {
            this.windowBytes = windowBytes;
            return this;
        }

        @Override
        public void validate() {
            CcConfig.requireNonNegative(rateBps, "rateBps");
            CcConfig.requireNonNegative(windowBytes, "windowBytes");
        }
    }

    /** Registers {@link StaticRate} as {@value #NAME}. */
    public static final class Provider implements CongestionControlProvider<Config> {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Class<Config> configType() {
            return Config.class;
        }

        @Override
        public CongestionControl create(final FlowContext flow, final Config config) {
            return new StaticRate(flow, config);
        }
    }
}
