package org.vrdma.cc;

/**
 * Creates one algorithm's per-flow instances. Registered for {@link java.util.ServiceLoader} in
 * {@code META-INF/services/org.vrdma.cc.CongestionControlProvider}; found by {@link #name()}.
 *
 * <p>A provider needs a public no-argument constructor; algorithms usually nest it as {@code
 * MyAlgorithm.Provider} so an algorithm stays one source file.
 *
 * @param <C> the algorithm's configuration type
 */
public interface CongestionControlProvider<C extends CcConfig> {
    /** The name the algorithm is chosen by, for example {@code "dcqcn"}; lower case. */
    String name();

    /** The configuration class Jackson binds JSON to; its no-argument constructor sets defaults. */
    Class<C> configType();

    /** Creates the state machine of one flow. {@code config} has been validated. */
    CongestionControl create(FlowContext flow, C config);
}
