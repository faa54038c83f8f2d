package org.vrdma.harness.junit;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.LabPlans;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabLoader;

/** Reads the lab file a {@link VrdmaLab} names: a class-path resource (next to the test class or absolute), else a file path. */
final class LabFiles {
    private LabFiles() {}

    static LabPlan plan(String file, Class<?> testClass) {
        return LabPlans.of(lab(file, testClass));
    }

    /** The lab, defaults applied and validated; CDF files it names are looked up next to it. */
    static Lab lab(String file, Class<?> testClass) {
        boolean yaml = file.endsWith(".yaml") || file.endsWith(".yml");
        try {
            URL url = resource(file, testClass);
            if (url != null && url.getProtocol().equals("file")) {
                return LabLoader.load(Path.of(url.toURI()));
            }
            if (url != null) {
                try (InputStream in = url.openStream()) {
                    return LabLoader.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), yaml);
                }
            }
            if (Files.exists(Path.of(file))) {
                return LabLoader.load(Path.of(file));
            }
            throw new IllegalArgumentException("lab file " + file + " is neither on the class path nor a file");
        } catch (IOException | URISyntaxException e) {
            throw new IllegalArgumentException("cannot read lab file " + file + ": " + e.getMessage(), e);
        }
    }

    private static URL resource(String file, Class<?> testClass) {
        URL url = testClass.getResource(file);
        if (url == null) {
            url = testClass.getClassLoader().getResource(file.startsWith("/") ? file.substring(1) : file);
        }
        return url;
    }
}
