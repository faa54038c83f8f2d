package org.vrdma.cc;

/**
 * An algorithm with its validated configuration: what a QP or an ENI selects once and then
 * instantiates for every new flow without parsing JSON again.
 */
public final class ConfiguredAlgorithm {
    private final CongestionControlProvider<CcConfig> provider;
    private final CcConfig config;

    @SuppressWarnings("unchecked")
    ConfiguredAlgorithm(final CongestionControlProvider<?> provider, final CcConfig config) {
        this.provider = (CongestionControlProvider<CcConfig>) provider;
        this.config = config;
    }

    /** The algorithm's registered name. */
    public String name() {
        return provider.name();
    }

    /** The validated configuration; treat it as read-only. */
    public CcConfig config() {
        return config;
    }

    /** Creates the congestion control of a new flow. */
    public CongestionControl create(final FlowContext flow) {
        return provider.create(flow, config);
    }

    @Override
    public String toString() {
        return "ConfiguredAlgorithm[" + provider.name() + "]";
    }
}
