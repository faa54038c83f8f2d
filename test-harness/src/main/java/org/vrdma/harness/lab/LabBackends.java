package org.vrdma.harness.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The registry of backends by name, filled from {@link ServiceLoader} ({@code
 * META-INF/services/org.vrdma.harness.lab.LabBackend}).
 */
public final class LabBackends {
    /** The backend {@code ./vrdma lab run} uses unless told otherwise. */
    public static final String DEFAULT = "virtual";

    private LabBackends() {}

    /** Every backend found, by name. */
    public static Map<String, LabBackend> all() {
        Map<String, LabBackend> m = new TreeMap<>();
        for (LabBackend b : ServiceLoader.load(LabBackend.class, LabBackends.class.getClassLoader())) {
            m.putIfAbsent(b.name(), b);
        }
        return m;
    }

    public static List<String> names() {
        return new ArrayList<>(all().keySet());
    }

    /**
     * The backend called {@code name}.
     *
     * @throws LabException naming the known backends when there is none
     */
    public static LabBackend get(String name) {
        LabBackend b = all().get(name);
        if (b == null) {
            throw new LabException("backend", "unknown backend " + name + " (have " + String.join(", ", names()) + ")");
        }
        return b;
    }
}
