package org.vrdma.harness.junit;

import java.lang.reflect.Parameter;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.vrdma.harness.backend.LabHost;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.StaleLabs;
import org.vrdma.verbs.IbvContext;

/**
 * The JUnit 5 extension behind {@link VrdmaLab}, also usable programmatically:
 *
 * <pre>
 * &#64;RegisterExtension
 * static final VrdmaLabExtension LAB = VrdmaLabExtension.builder().backend("netns").hosts(3).build();
 * </pre>
 *
 * Test methods take {@link RunningLab}, {@link LabHost} and {@link IbvContext} parameters (the
 * Java verbs context of a host's ENI, embedded backend). Before each test it brings a lab up; the lab goes into the test's extension store, which JUnit
 * closes after the test whatever its outcome, and closing checks that nothing of the lab is left
 * (namespaces, containers, networks, images, processes, threads) and fails the test otherwise.
 */
public final class VrdmaLabExtension implements BeforeEachCallback, ParameterResolver {
    /** Overrides the backend of every lab: run the same tests on another backend. */
    public static final String BACKEND_PROPERTY = "vrdma.lab.backend";

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(VrdmaLabExtension.class);
    private static final String KEY = "lab";

    private final Config config;

    /** What {@link VrdmaLab} on the test or its class says. */
    public VrdmaLabExtension() {
        this(null);
    }

    private VrdmaLabExtension(Config config) {
        this.config = config;
    }

    /** A programmatic configuration, for {@code @RegisterExtension}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link VrdmaLabExtension}: backend, a plan or a host count. */
    public static final class Builder {
        private String backend = "embedded";
        private LabPlan plan = LabPlan.hosts("lab", 2);

        public Builder backend(String name) {
            this.backend = name;
            return this;
        }

        public Builder hosts(int count) {
            this.plan = LabPlan.hosts("lab", count);
            return this;
        }

        public Builder plan(LabPlan labPlan) {
            this.plan = labPlan;
            return this;
        }

        public VrdmaLabExtension build() {
            return new VrdmaLabExtension(new Config(backend, plan));
        }
    }

    private record Config(String backend, LabPlan plan) {}

    /** Backends whose stale labs this JVM has removed already. */
    private static final java.util.Set<String> SWEPT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        Config c = config != null ? config : fromAnnotation(context);
        String backend = System.getProperty(BACKEND_PROPERTY, c.backend());
        if (SWEPT.add(backend)) {
            // A test JVM killed before (a CI timeout) ran no shutdown hook: remove what its labs left.
            StaleLabs.Report swept = StaleLabs.remove(RunningLab.idPrefix(), false, backend.equals("docker"));
            if (!swept.removed().isEmpty()) {
                System.err.println("vrdma lab: removed what killed labs left behind: " + swept.removed());
            }
        }
        RunningLab lab = RunningLab.start(backend, c.plan());
        context.getStore(NAMESPACE).put(KEY, new Teardown(lab));
    }

    private static Config fromAnnotation(ExtensionContext context) {
        Optional<VrdmaLab> a =
                context.getTestMethod().flatMap(m -> AnnotationSupport.findAnnotation(m, VrdmaLab.class));
        if (a.isEmpty()) {
            a = context.getTestClass().flatMap(c -> AnnotationSupport.findAnnotation(c, VrdmaLab.class));
        }
        VrdmaLab lab = a.orElseThrow(() -> new IllegalStateException("no @VrdmaLab on " + context.getDisplayName()));
        LabPlan plan = lab.value().isEmpty()
                ? LabPlan.hosts("lab", lab.hosts())
                : LabFiles.plan(lab.value(), context.getRequiredTestClass());
        return new Config(lab.backend(), plan);
    }

    /** Closes the lab when JUnit closes the test's store, and fails if anything of it is left. */
    private record Teardown(RunningLab lab) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            lab.close();
            List<String> left = lab.leftovers();
            if (!left.isEmpty()) {
                throw new IllegalStateException("lab " + lab.id() + " left behind: " + left);
            }
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == RunningLab.class || type == LabHost.class || type == IbvContext.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Teardown t = extensionContext.getStore(NAMESPACE).get(KEY, Teardown.class);
        if (t == null) {
            throw new ParameterResolutionException("no lab for " + extensionContext.getDisplayName()
                    + ": lab parameters belong to test methods (not constructors or @BeforeAll)");
        }
        RunningLab lab = t.lab();
        Parameter p = parameterContext.getParameter();
        if (p.getType() == RunningLab.class) {
            return lab;
        }
        LabHost host;
        Optional<VrdmaLab.Host> named = parameterContext.findAnnotation(VrdmaLab.Host.class);
        if (named.isPresent()) {
            host = lab.host(named.get().value());
        } else {
            // The n-th LabHost (or IbvContext) parameter is the n-th host.
            int n = 0;
            Parameter[] all = p.getDeclaringExecutable().getParameters();
            for (int i = 0; i < parameterContext.getIndex(); i++) {
                if (all[i].getType() == p.getType() && !all[i].isAnnotationPresent(VrdmaLab.Host.class)) {
                    n++;
                }
            }
            List<LabHost> hosts = lab.hosts();
            if (n >= hosts.size()) {
                throw new ParameterResolutionException(
                        "the test takes more hosts than lab " + lab.plan().name() + " has (" + hosts.size() + ")");
            }
            host = hosts.get(n);
        }
        if (p.getType() == IbvContext.class) {
            try {
                return lab.verbsContext(host);
            } catch (UnsupportedOperationException e) {
                throw new ParameterResolutionException(e.getMessage(), e);
            }
        }
        return host;
    }
}
