package org.vrdma.harness.junit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.harness.backend.LabPlans;
import org.vrdma.harness.lab.LabLoader;

/** Reads the lab file a {@link VrdmaLab} names: a class-path resource (next to the test class or absolute), else a file path. */
final class LabFiles {
    private LabFiles() {}

    static LabPlan plan(String file, Class<?> testClass) {
        boolean yaml = file.endsWith(".yaml") || file.endsWith(".yml");
        try {
            String text;
            try (InputStream in = resource(file, testClass)) {
                if (in != null) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                } else if (Files.exists(Path.of(file))) {
                    text = Files.readString(Path.of(file));
                } else {
                    throw new IllegalArgumentException("lab file " + file + " is neither on the class path nor a file");
                }
            }
            return LabPlans.of(LabLoader.parse(text, yaml));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read lab file " + file + ": " + e.getMessage(), e);
        }
    }

    private static InputStream resource(String file, Class<?> testClass) {
        InputStream in = testClass.getResourceAsStream(file);
        if (in == null) {
            in = testClass.getClassLoader().getResourceAsStream(file.startsWith("/") ? file.substring(1) : file);
        }
        return in;
    }
}
