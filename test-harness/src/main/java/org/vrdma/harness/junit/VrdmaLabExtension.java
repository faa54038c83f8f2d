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
import org.vrdma.harness.backend.HostBackend;
import org.vrdma.harness.backend.LabHost;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.LabPlans;
import org.vrdma.harness.backend.RealTimeLabRun;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.StaleLabs;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.TopologySpec;
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
 * Java verbs context of a host's ENI, embedded backend), or a {@link LabRun}: the lab definition
 * brought up on any {@link LabBackends lab backend}, the {@code virtual} one included, whose {@code
 * run} runs the lab's workloads and returns its results (a test that takes a {@code LabRun}, or runs
 * on {@code virtual}, gets its lab that way). Before each test it brings a lab up; the lab goes into the test's extension store, which JUnit
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

    /** Builds a {@link VrdmaLabExtension}: backend, and a plan, a lab or a host count. */
    public static final class Builder {
        private String backend = "embedded";
        private LabPlan plan = LabPlan.hosts("lab", 2);
        private Lab lab = hostsLab(2);

        public Builder backend(String name) {
            this.backend = name;
            return this;
        }

        public Builder hosts(int count) {
            this.plan = LabPlan.hosts("lab", count);
            this.lab = hostsLab(count);
            return this;
        }

        public Builder plan(LabPlan labPlan) {
            this.plan = labPlan;
            this.lab = null;
            return this;
        }

        /** A lab definition (e.g. {@code LabLoader.load(path)}): for {@link LabRun} parameters, any backend. */
        public Builder lab(Lab definition) {
            this.lab = definition;
            this.plan = null;
            return this;
        }

        public VrdmaLabExtension build() {
            return new VrdmaLabExtension(new Config(backend, plan, lab));
        }
    }

    /** What to bring up: a plan (hosts for transfers) and, or, a lab definition (for a LabRun). */
    private record Config(String backend, LabPlan plan, Lab lab) {}

    /** {@code count} hosts on one switch (two: one link), as a lab definition. */
    static Lab hostsLab(int count) {
        TopologySpec topology = count == 2 ? TopologySpec.pair(null) : TopologySpec.star(count, null);
        return new Lab("lab", null, null, null, null, null, topology, null, null, null, null, null, null);
    }

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
        boolean wantsRun = context.getTestMethod()
                .map(m -> java.util.Arrays.asList(m.getParameterTypes()).contains(LabRun.class))
                .orElse(false);
        if (wantsRun || !(LabBackends.all().get(backend) instanceof HostBackend)) {
            // A LabRun: the lab definition on any LabBackend, the virtual one included.
            if (c.lab() == null) {
                throw new ParameterResolutionException("a LabRun needs a lab definition (a lab file, hosts, or"
                        + " builder().lab(...)), not a LabPlan");
            }
            LabRun run = LabBackends.get(backend).start(c.lab());
            RunningLab running = run instanceof RealTimeLabRun rt ? rt.runningLab() : null;
            context.getStore(NAMESPACE).put(KEY, new Teardown(running, run));
            return;
        }
        // A lab file the real-time hosts cannot take says why (LabPlans names the field).
        LabPlan plan = c.plan() != null ? c.plan() : LabPlans.of(c.lab());
        RunningLab lab = RunningLab.start(backend, plan);
        context.getStore(NAMESPACE).put(KEY, new Teardown(lab, null));
    }

    private static Config fromAnnotation(ExtensionContext context) {
        Optional<VrdmaLab> a =
                context.getTestMethod().flatMap(m -> AnnotationSupport.findAnnotation(m, VrdmaLab.class));
        if (a.isEmpty()) {
            a = context.getTestClass().flatMap(c -> AnnotationSupport.findAnnotation(c, VrdmaLab.class));
        }
        VrdmaLab lab = a.orElseThrow(() -> new IllegalStateException("no @VrdmaLab on " + context.getDisplayName()));
        if (lab.value().isEmpty()) {
            return new Config(lab.backend(), LabPlan.hosts("lab", lab.hosts()), hostsLab(lab.hosts()));
        }
        Lab definition = LabFiles.lab(lab.value(), context.getRequiredTestClass());
        LabPlan plan;
        try {
            plan = LabPlans.of(definition);
        } catch (LabException e) {
            plan = null; // more than the real-time hosts take (several ENIs or VPCs): a LabRun only
        }
        return new Config(lab.backend(), plan, definition);
    }

    /**
     * Closes the lab when JUnit closes the test's store, and fails if anything of it is left.
     *
     * @param lab the real-time lab (null on the virtual backend)
     * @param run the lab run when the test took a {@link LabRun} (it closes {@code lab}), else null
     */
    private record Teardown(RunningLab lab, LabRun run) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            if (run != null) {
                run.close();
            } else {
                lab.close();
            }
            if (lab != null) {
                List<String> left = lab.leftovers();
                if (!left.isEmpty()) {
                    throw new IllegalStateException("lab " + lab.id() + " left behind: " + left);
                }
            }
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == RunningLab.class || type == LabHost.class || type == IbvContext.class || type == LabRun.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Teardown t = extensionContext.getStore(NAMESPACE).get(KEY, Teardown.class);
        if (t == null) {
            throw new ParameterResolutionException("no lab for " + extensionContext.getDisplayName()
                    + ": lab parameters belong to test methods (not constructors or @BeforeAll)");
        }
        Parameter p = parameterContext.getParameter();
        if (p.getType() == LabRun.class) {
            return t.run();
        }
        RunningLab lab = t.lab();
        if (lab == null) {
            throw new ParameterResolutionException("the " + t.run().backend() + " backend has no real-time hosts for "
                    + p.getType().getSimpleName() + " parameters: take a LabRun (its hosts, ENIs and vNIC devices,"
                    + " run() for the lab's workloads and results)");
        }
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
