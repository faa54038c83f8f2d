package org.vrdma.cc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A researcher's algorithm, compiled separately into its own jar (src/test/plugin-fixture), is found
 * by name through ServiceLoader without any change to this module.
 */
class PluginDiscoveryTest {
    private static final Path FIXTURE = Path.of("src/test/plugin-fixture");
    private static final FlowContext FLOW = FlowContext.of(100_000_000_000L, 8_000, 4096, 1);

    @Test
    void thirdPartyJarIsFoundByName(@TempDir final Path tmp) throws Exception {
        final Path jar = buildPluginJar(tmp);

        assertThat(CongestionControls.defaults().contains("constant-rate")).isFalse();
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {jar.toUri().toURL()}, CongestionControl.class.getClassLoader())) {
            final CongestionControls registry = CongestionControls.using(loader);

            assertThat(registry.names()).contains("constant-rate", "dcqcn", "hpcc");
            final CongestionControl cc = registry.newControl("constant-rate", "{\"rateBps\": 25000000000}", FLOW);
            assertThat(cc.getClass().getName()).isEqualTo("org.example.ccplugin.ConstantRate");
            assertThat(cc.rateBps()).isEqualTo(25_000_000_000L);
            cc.onCnp(1_000);
            assertThat(cc.rateBps()).isEqualTo(12_500_000_000L);

            final TransmitGate gate = new TransmitGate(registry.newControl("constant-rate", null, FLOW), 0);
            gate.onPacketSent(0, 1_250);
            assertThat(gate.earliestDepartureNs(0, 1_250)).isEqualTo(10_000); // 1250 B at 1 Gbit/s
        }
    }

    @Test
    void pluginConfigIsValidatedLikeOurs(@TempDir final Path tmp) throws Exception {
        final Path jar = buildPluginJar(tmp);
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {jar.toUri().toURL()}, CongestionControl.class.getClassLoader())) {
            final CongestionControls registry = CongestionControls.using(loader);
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> registry.newControl("constant-rate", "{\"rateBps\": 0}", FLOW))
                    .isInstanceOf(CcConfigException.class)
                    .hasMessage("constant-rate.rateBps: must be positive, was 0");
        }
    }

    /** Compiles the fixture against this module's classes and packs it with its services file. */
    private static Path buildPluginJar(final Path tmp) throws IOException {
        final Path classes = Files.createDirectories(tmp.resolve("classes"));
        final List<Path> sources;
        try (Stream<Path> walk = Files.walk(FIXTURE)) {
            sources = walk.filter(p -> p.toString().endsWith(".java")).toList();
        }
        final String apiClasses = classpathOf(CongestionControl.class)
                + java.io.File.pathSeparator
                + classpathOf(com.fasterxml.jackson.databind.JsonNode.class);
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final String[] args = Stream.concat(
                        Stream.of("-d", classes.toString(), "-cp", apiClasses, "-proc:none"),
                        sources.stream().map(Path::toString))
                .toArray(String[]::new);
        assertThat(javac.run(null, null, null, args)).as("fixture compiles").isZero();

        final Path jar = tmp.resolve("ccplugin.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream jarOut = new JarOutputStream(out)) {
            add(jarOut, classes);
            add(jarOut, FIXTURE.resolve("META-INF").getParent());
        }
        return jar;
    }

    private static void add(final JarOutputStream jarOut, final Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (final Path file : walk.filter(Files::isRegularFile).sorted().toList()) {
                final String name = root.relativize(file).toString().replace('\\', '/');
                if (name.endsWith(".java")) {
                    continue;
                }
                jarOut.putNextEntry(new JarEntry(name));
                Files.copy(file, jarOut);
                jarOut.closeEntry();
            }
        }
    }

    private static String classpathOf(final Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (final java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
