package org.vrdma.cc;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.Collections;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;

/**
 * Registry of the congestion-control algorithms that {@link ServiceLoader} finds through {@link
 * CongestionControlProvider}, and the JSON binding of their configurations.
 *
 * <pre>{@code
 * CongestionControl cc = CongestionControls.create("dcqcn", "{\"g\": 0.00390625}", flow);
 * }</pre>
 *
 * A researcher's jar that registers a provider is found by putting it on the class path, or by
 * {@link #using(ClassLoader)} with a class loader that sees it.
 */
public final class CongestionControls {
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .visibility(PropertyAccessor.ALL, JsonAutoDetect.Visibility.NONE)
            .visibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .build();

    private final Map<String, CongestionControlProvider<?>> providers;

    private CongestionControls(final Map<String, CongestionControlProvider<?>> providers) {
        this.providers = Collections.unmodifiableMap(providers);
    }

    /** The algorithms visible to this module's class loader. */
    public static CongestionControls defaults() {
        return Defaults.INSTANCE;
    }

    /**
     * The algorithms {@code classLoader} finds, for example a researcher's jar loaded at run time.
     *
     * @throws IllegalStateException if two providers register the same name
     */
    public static CongestionControls using(final ClassLoader classLoader) {
        final Map<String, CongestionControlProvider<?>> byName = new TreeMap<>();
        for (final CongestionControlProvider<?> provider :
                ServiceLoader.load(CongestionControlProvider.class, classLoader)) {
            final CongestionControlProvider<?> previous = byName.putIfAbsent(provider.name(), provider);
            if (previous != null && previous.getClass() != provider.getClass()) {
                throw new IllegalStateException("congestion control '" + provider.name() + "' is registered by both "
                        + previous.getClass().getName() + " and "
                        + provider.getClass().getName());
            }
        }
        return new CongestionControls(byName);
    }

    /**
     * Creates a flow's congestion control from the {@link #defaults()} registry.
     *
     * @param name registered name, for example {@code "dcqcn"}
     * @param json the algorithm's configuration object; null or empty for the defaults
     * @throws CcConfigException for an unknown name or a bad configuration, naming the field
     */
    public static CongestionControl create(final String name, final String json, final FlowContext flow) {
        return defaults().configure(name, json).create(flow);
    }

    /** Same as {@link #create(String, String, FlowContext)} with an already parsed JSON tree. */
    public static CongestionControl create(final String name, final JsonNode json, final FlowContext flow) {
        return defaults().configure(name, json).create(flow);
    }

    /** Names of the registered algorithms, sorted. */
    public Set<String> names() {
        return providers.keySet();
    }

    /** Whether an algorithm of that name is registered. */
    public boolean contains(final String name) {
        return providers.containsKey(name);
    }

    /** Binds and validates {@code json} for algorithm {@code name}; null or blank means defaults. */
    public ConfiguredAlgorithm configure(final String name, final String json) {
        final CongestionControlProvider<?> provider = provider(name);
        if (json == null || json.isBlank()) {
            return configure(provider, null);
        }
        try {
            return configure(provider, MAPPER.readTree(json));
        } catch (final JsonProcessingException e) {
            throw new CcConfigException(name, "malformed JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** Binds and validates {@code json} for algorithm {@code name}; null means defaults. */
    public ConfiguredAlgorithm configure(final String name, final JsonNode json) {
        return configure(provider(name), json);
    }

    /** Creates a flow's congestion control from this registry. */
    public CongestionControl newControl(final String name, final String json, final FlowContext flow) {
        return configure(name, json).create(flow);
    }

    /**
     * The default configuration of algorithm {@code name}, as a JSON object: what a researcher edits.
     */
    public JsonNode defaultConfig(final String name) {
        return MAPPER.valueToTree(newConfig(provider(name)));
    }

    private CongestionControlProvider<?> provider(final String name) {
        final CongestionControlProvider<?> provider = providers.get(name);
        if (provider == null) {
            throw new CcConfigException(
                    String.valueOf(name), "unknown congestion control; registered: " + providers.keySet());
        }
        return provider;
    }

    private static ConfiguredAlgorithm configure(final CongestionControlProvider<?> provider, final JsonNode json) {
        final String name = provider.name();
        final CcConfig config;
        if (json == null || json.isNull() || json.isMissingNode()) {
            config = newConfig(provider);
        } else if (!json.isObject()) {
            throw new CcConfigException(name, "must be a JSON object, was " + json.getNodeType());
        } else {
            try {
                config = MAPPER.treeToValue(json, provider.configType());
            } catch (final UnrecognizedPropertyException e) {
                throw new CcConfigException(
                        path(name, e), "unknown field; known fields: " + e.getKnownPropertyIds(), e);
            } catch (final MismatchedInputException e) {
                final Class<?> target = e.getTargetType();
                throw new CcConfigException(
                        path(name, e),
                        "expected " + (target == null ? "another type" : describe(target)) + " ("
                                + e.getOriginalMessage() + ")",
                        e);
            } catch (final JsonMappingException e) {
                throw new CcConfigException(path(name, e), e.getOriginalMessage(), e);
            } catch (final JsonProcessingException e) {
                throw new CcConfigException(name, e.getOriginalMessage(), e);
            }
        }
        try {
            config.validate();
        } catch (final CcConfigException e) {
            throw e.under(name);
        }
        return new ConfiguredAlgorithm(provider, config);
    }

    private static CcConfig newConfig(final CongestionControlProvider<?> provider) {
        try {
            return provider.configType().getConstructor().newInstance();
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(
                    provider.configType().getName() + " needs a public no-argument constructor", e);
        }
    }

    private static String path(final String name, final JsonMappingException e) {
        final StringBuilder sb = new StringBuilder(name);
        for (final JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                sb.append('.').append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                sb.append('[').append(ref.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static String describe(final Class<?> type) {
        if (type == double.class || type == float.class || type == Double.class) {
            return "a number";
        }
        if (type == long.class || type == int.class || type == Long.class || type == Integer.class) {
            return "an integer";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        return type.getSimpleName();
    }

    // Lazy holder: ServiceLoader runs on first use, not when the class loads.
    private static final class Defaults {
        static final CongestionControls INSTANCE = using(CongestionControls.class.getClassLoader());
    }
}
