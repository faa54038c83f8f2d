package org.vrdma.cc;

import java.util.Objects;
import java.util.function.BiFunction;

/**
 * A provider made of a name, a config class and a constructor reference, so an algorithm's
 * registration is one line: {@code public Provider() { super(NAME, Config.class, MyCc::new); }}.
 *
 * @param <C> the algorithm's configuration type
 */
public abstract class SimpleProvider<C extends CcConfig> implements CongestionControlProvider<C> {
    private final String name;
    private final Class<C> configType;
    private final BiFunction<FlowContext, C, ? extends CongestionControl> factory;

    protected SimpleProvider(
            String name, Class<C> configType, BiFunction<FlowContext, C, ? extends CongestionControl> factory) {
        this.name = Objects.requireNonNull(name, "name");
        this.configType = Objects.requireNonNull(configType, "configType");
        this.factory = Objects.requireNonNull(factory, "factory");
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Class<C> configType() {
        return configType;
    }

    @Override
    public final CongestionControl create(FlowContext flow, C config) {
        return factory.apply(flow, config);
    }
}
