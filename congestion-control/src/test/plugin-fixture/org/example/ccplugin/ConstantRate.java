package org.example.ccplugin;

import org.vrdma.cc.CcConfig;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.CongestionControlProvider;
import org.vrdma.cc.FlowContext;

/**
 * A third-party algorithm as a researcher would write it: one class, with its configuration and its
 * provider nested, registered by one line in META-INF/services. It halves its rate on every CNP and
 * returns to the configured rate on the next ACK.
 */
public final class ConstantRate implements CongestionControl {
    private final long rateBps;
    private long currentBps;

    public ConstantRate(final FlowContext flow, final Config config) {
        this.rateBps = Math.min(flow.lineRateBps(), config.rateBps);
        this.currentBps = rateBps;
    }

    @Override
    public String name() {
        return "constant-rate";
    }

    @Override
    public void onCnp(final long nowNs) {
        currentBps = Math.max(1, currentBps / 2);
    }

    @Override
    public void onAck(final long nowNs, final long ackedBytes, final long rttNs, final boolean ecnEcho) {
        currentBps = rateBps;
    }

    @Override
    public long rateBps() {
        return currentBps;
    }

    public static final class Config implements CcConfig {
        private long rateBps = 1_000_000_000L;

        @Override
        public void validate() {
            CcConfig.requirePositive(rateBps, "rateBps");
        }
    }

    public static final class Provider implements CongestionControlProvider<Config> {
        @Override
        public String name() {
            return "constant-rate";
        }

        @Override
        public Class<Config> configType() {
            return Config.class;
        }

        @Override
        public CongestionControl create(final FlowContext flow, final Config config) {
            return new ConstantRate(flow, config);
        }
    }
}
