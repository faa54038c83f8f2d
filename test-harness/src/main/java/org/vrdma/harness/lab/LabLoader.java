package org.vrdma.harness.lab;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads labs from JSON or YAML (by file extension: {@code .yaml}/{@code .yml}, else JSON), rejects
 * unknown fields, applies defaults and validates; every error is a {@link LabException} naming the
 * field's path.
 */
public final class LabLoader {
    private static final ObjectMapper JSON = configure(JsonMapper.builder().build());
    private static final ObjectMapper YAML = configure(new ObjectMapper(new YAMLFactory()));

    private LabLoader() {}

    private static ObjectMapper configure(ObjectMapper m) {
        return m.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                // 1.5 ns of delay or 2.5 hosts is a mistake to report, not a number to truncate.
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .enable(SerializationFeature.INDENT_OUTPUT)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
    }

    /** The JSON mapper labs and results are written with. */
    public static ObjectMapper json() {
        return JSON;
    }

    /**
     * Loads, applies defaults, validates. A CDF file a {@code poisson} workload names by a relative
     * path is looked up next to the lab file first (then from the working directory), and its points
     * go into the lab ({@link WorkloadSpec.Poisson#cdfPoints}), so the lab as run, and the results
     * that embed it, replay exactly without the file.
     */
    public static Lab load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new LabException("", "cannot read lab file " + file + ": no such file", e);
        } catch (IOException e) {
            throw new LabException("", "cannot read lab file " + file + ": " + e.getMessage(), e);
        }
        String n = file.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        Lab lab = read(text, n.endsWith(".yaml") || n.endsWith(".yml"));
        return finish(withCdfPoints(lab, file.toAbsolutePath().getParent()));
    }

    /**
     * Parses JSON ({@code yaml} false) or YAML text, applies defaults, validates. A results file
     * ({@code results.json} of a run) gives the lab it embeds, so the run replays exactly. CDF file
     * paths are taken from the working directory.
     */
    public static Lab parse(String text, boolean yaml) {
        return finish(withCdfPoints(read(text, yaml), null));
    }

    private static Lab finish(Lab lab) {
        Lab withDefaults = lab.withDefaults();
        LabValidator.validate(withDefaults);
        return withDefaults;
    }

    /**
     * The lab with the points of every CDF file its {@code poisson} workloads name (built-in
     * distributions and workloads that carry their points stay as they are); {@code dir}, when
     * not null, is where relative paths are looked up first.
     */
    static Lab withCdfPoints(Lab lab, Path dir) {
        if (lab.workloads() == null) {
            return lab;
        }
        java.util.List<WorkloadSpec> out = new java.util.ArrayList<>();
        boolean changed = false;
        for (int i = 0; i < lab.workloads().size(); i++) {
            WorkloadSpec w = lab.workloads().get(i);
            if (w instanceof WorkloadSpec.Poisson p
                    && p.cdfPoints() == null
                    && p.cdf() != null
                    && !FlowSizeCdf.isBuiltIn(p.cdf())) {
                Path file = Path.of(p.cdf());
                if (dir != null && !file.isAbsolute() && Files.isRegularFile(dir.resolve(file))) {
                    file = dir.resolve(file);
                }
                try {
                    w = p.withCdfPoints(FlowSizeCdf.named(file.toString()));
                } catch (IllegalArgumentException e) {
                    String where = dir == null || file.isAbsolute()
                            ? ""
                            : " (looked in " + dir + " and the working directory)";
                    throw new LabException("workloads[" + i + "].cdf", e.getMessage() + where, e);
                }
                changed = true;
            }
            out.add(w);
        }
        return changed ? lab.withWorkloads(out) : lab;
    }

    private static Lab read(String text, boolean yaml) {
        Lab lab;
        try {
            com.fasterxml.jackson.databind.JsonNode tree = (yaml ? YAML : JSON).readTree(text);
            if (tree != null && tree.has("format") && tree.has("lab") && tree.has("backend")) {
                // A results file: replay the lab it embeds (with its seed).
                tree = tree.get("lab");
            }
            lab = tree == null || tree.isMissingNode() ? null : (yaml ? YAML : JSON).treeToValue(tree, Lab.class);
        } catch (JsonMappingException e) {
            throw new LabException(path(e), message(e), e);
        } catch (JsonProcessingException e) {
            com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
            String where = at == null || at.getLineNr() < 1
                    ? ""
                    : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw new LabException(
                    "", "not valid " + (yaml ? "YAML" : "JSON") + where + ": " + e.getOriginalMessage(), e);
        }
        if (lab == null) {
            throw new LabException("", "the lab file is empty");
        }
        return lab;
    }

    /** The lab as JSON text (how results embed it). */
    public static String toJson(Lab lab) {
        try {
            return JSON.writeValueAsString(lab);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String path(JsonMappingException e) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            } else if (r.getFieldName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(r.getFieldName());
            }
        }
        return sb.toString();
    }

    private static String message(JsonMappingException e) {
        String m = e.getOriginalMessage();
        if (m.startsWith("Unrecognized field")) {
            int q = m.indexOf('"');
            int q2 = m.indexOf('"', q + 1);
            String field = q >= 0 && q2 > q ? m.substring(q + 1, q2) : "?";
            return "unknown field " + field;
        }
        if (m.contains("Could not resolve type id")) {
            java.util.regex.Matcher id =
                    java.util.regex.Pattern.compile("type id '([^']*)'").matcher(m);
            return "unknown type " + (id.find() ? id.group(1) + " " : "")
                    + "(workloads: perftest, incast, allToAll, poisson, flows)";
        }
        if (m.contains("missing type id")) {
            return "needs a type (perftest, incast, allToAll, poisson, flows)";
        }
        if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
            // A value of the wrong kind: say what the field takes, not which Java type failed.
            String expected = "expected " + kind(mismatch.getTargetType());
            return e instanceof InvalidFormatException bad ? expected + ", not \"" + bad.getValue() + "\"" : expected;
        }
        return m.split("\n")[0];
    }

    private static String kind(Class<?> type) {
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "a whole number";
        }
        if (Number.class.isAssignableFrom(type) || type == double.class || type == float.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class || type.isEnum()) {
            return "a string";
        }
        if (java.util.Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "a list";
        }
        return type == Lab.class ? "a JSON object (the lab)" : "an object";
    }
}
