package org.vrdma.harness.backend;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

/**
 * The command line that runs the {@code ./vrdma} launcher's main class in a child JVM with this
 * JVM's java and class path, the way a lab host process starts in a network namespace or a
 * container. A marker property names the lab, so leftover processes of a lab can be found.
 */
public final class VrdmaJava {
    /** The launcher's main class. */
    public static final String MAIN_CLASS = "org.vrdma.harness.cli.VrdmaCli";

    /** The system property every lab host process carries: {@code -Dvrdma.lab=<lab id>}. */
    public static final String LAB_PROPERTY = "vrdma.lab";

    private VrdmaJava() {}

    /** The JDK (or JRE) this JVM runs on. */
    public static Path javaHome() {
        return Path.of(System.getProperty("java.home"));
    }

    /**
     * This JVM's class path, with manifest-only jars (as test runners use) expanded to the
     * entries their {@code Class-Path} names; entries that do not exist are left out.
     */
    public static List<Path> classPath() {
        Set<Path> entries = new LinkedHashSet<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path p = Path.of(entry).toAbsolutePath().normalize();
            if (!Files.exists(p)) {
                continue;
            }
            entries.add(p);
            if (p.toString().endsWith(".jar")) {
                entries.addAll(manifestClassPath(p));
            }
        }
        return List.copyOf(entries);
    }

    private static List<Path> manifestClassPath(Path jar) {
        List<Path> out = new ArrayList<>();
        try (JarFile f = new JarFile(jar.toFile())) {
            var manifest = f.getManifest();
            String cp = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
            if (cp == null) {
                return out;
            }
            URI base = jar.toUri();
            for (String item : cp.trim().split("\\s+")) {
                Path p = Path.of(base.resolve(item)).toAbsolutePath().normalize();
                if (Files.exists(p)) {
                    out.add(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the class path of " + jar, e);
        }
        return out;
    }

    /**
     * The command: {@code prefix java <options> -cp <class path> VrdmaCli args}. The prefix runs
     * it elsewhere (e.g. {@code ip netns exec NS}); {@code labId} becomes the marker property.
     */
    public static List<String> command(List<String> prefix, String labId, List<String> args) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(javaHome().resolve("bin").resolve("java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-XX:MaxDirectMemorySize=512m");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        if (labId != null) {
            cmd.add("-D" + LAB_PROPERTY + "=" + labId);
        }
        cmd.add("-cp");
        cmd.add(String.join(
                java.io.File.pathSeparator,
                classPath().stream().map(Path::toString).toList()));
        cmd.add(MAIN_CLASS);
        cmd.addAll(args);
        return cmd;
    }
}
