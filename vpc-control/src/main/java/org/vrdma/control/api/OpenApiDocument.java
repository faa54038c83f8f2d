package org.vrdma.control.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Builds the OpenAPI 3.0 document of the API from the route table; schemas are derived from the
 * record classes the routes take and return, so they follow the code.
 */
public final class OpenApiDocument {
    private static final Pattern PATH_PARAM = Pattern.compile("\\{([^}]+)}");

    private OpenApiDocument() {}

    public static Map<String, Object> build(List<ApiRoute> routes, String version) {
        Map<String, Object> schemas = new TreeMap<>();
        schemas.put("Error", errorSchema());
        Map<String, Map<String, Object>> paths = new TreeMap<>();
        for (ApiRoute r : routes) {
            Map<String, Object> op = new LinkedHashMap<>();
            op.put("operationId", r.operationId());
            op.put("tags", List.of(r.tag()));
            op.put("summary", r.summary());
            if (!r.authenticated()) {
                op.put("security", List.of());
            }
            List<Object> params = new ArrayList<>();
            Matcher m = PATH_PARAM.matcher(r.path());
            while (m.find()) {
                params.add(
                        Map.of("name", m.group(1), "in", "path", "required", true, "schema", Map.of("type", "string")));
            }
            for (ApiRoute.Param p : r.params()) {
                params.add(Map.of(
                        "name",
                        p.name(),
                        "in",
                        p.in(),
                        "required",
                        false,
                        "description",
                        p.description(),
                        "schema",
                        Map.of("type", p.type())));
            }
            if (!params.isEmpty()) {
                op.put("parameters", params);
            }
            if (r.requestBody() != null) {
                op.put(
                        "requestBody",
                        Map.of(
                                "required",
                                true,
                                "content",
                                Map.of("application/json", Map.of("schema", schema(r.requestBody(), schemas)))));
            }
            Map<String, Object> responses = new TreeMap<>();
            Map<String, Object> ok = new LinkedHashMap<>();
            ok.put("description", "success");
            if (r.response() == String.class) {
                ok.put("content", Map.of("text/plain", Map.of("schema", Map.of("type", "string"))));
            } else if (r.response() != null) {
                Object s = schema(r.response(), schemas);
                if (r.listOf()) {
                    s = Map.of(
                            "type",
                            "object",
                            "required",
                            List.of("items"),
                            "properties",
                            Map.of("items", Map.of("type", "array", "items", s)));
                }
                ok.put("content", Map.of("application/json", Map.of("schema", s)));
            }
            responses.put(String.valueOf(r.status()), ok);
            List<Integer> errors = new ArrayList<>(r.errors());
            if (r.authenticated()) {
                errors.add(401);
            }
            for (int status : errors) {
                responses.put(
                        String.valueOf(status),
                        Map.of(
                                "description",
                                reason(status),
                                "content",
                                Map.of(
                                        "application/json",
                                        Map.of("schema", Map.of("$ref", "#/components/schemas/Error")))));
            }
            op.put("responses", responses);
            paths.computeIfAbsent(r.path(), k -> new TreeMap<>()).put(r.method().toLowerCase(), op);
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("openapi", "3.0.3");
        doc.put(
                "info",
                Map.of(
                        "title", "vRDMA control plane API",
                        "version", version,
                        "description",
                                "VPCs, subnets, hosts, ENIs, security groups and QoS policies; the desired-state stream of the host agents."));
        doc.put("servers", List.of(Map.of("url", "/")));
        doc.put("security", List.of(Map.of("bearerAuth", List.of())));
        doc.put("paths", paths);
        doc.put(
                "components",
                Map.of(
                        "schemas",
                        schemas,
                        "securitySchemes",
                        Map.of("bearerAuth", Map.of("type", "http", "scheme", "bearer"))));
        return doc;
    }

    private static Map<String, Object> errorSchema() {
        return Map.of(
                "type",
                "object",
                "required",
                List.of("error"),
                "properties",
                Map.of(
                        "error",
                        Map.of(
                                "type",
                                "object",
                                "required",
                                List.of("code", "message"),
                                "properties",
                                Map.of(
                                        "code", Map.of("type", "string"),
                                        "field", Map.of("type", "string", "nullable", true),
                                        "message", Map.of("type", "string")))));
    }

    static Object schema(Type type, Map<String, Object> schemas) {
        if (type instanceof ParameterizedType p) {
            Class<?> raw = (Class<?>) p.getRawType();
            if (List.class.isAssignableFrom(raw)) {
                return Map.of("type", "array", "items", schema(p.getActualTypeArguments()[0], schemas));
            }
            if (Map.class.isAssignableFrom(raw)) {
                return Map.of("type", "object", "additionalProperties", schema(p.getActualTypeArguments()[1], schemas));
            }
            throw new IllegalArgumentException("no schema for " + type);
        }
        Class<?> c = (Class<?>) type;
        if (c == String.class) {
            return Map.of("type", "string");
        }
        if (c == int.class || c == Integer.class) {
            return Map.of("type", "integer", "format", "int32");
        }
        if (c == long.class || c == Long.class) {
            return Map.of("type", "integer", "format", "int64");
        }
        if (c == boolean.class || c == Boolean.class) {
            return Map.of("type", "boolean");
        }
        if (c == double.class || c == Double.class) {
            return Map.of("type", "number");
        }
        if (JsonNode.class.isAssignableFrom(c)) {
            return Map.of("description", "any JSON value");
        }
        if (c.isRecord()) {
            String name = c.getSimpleName();
            if (!schemas.containsKey(name)) {
                schemas.put(name, Map.of()); // placeholder against recursion
                Map<String, Object> props = new LinkedHashMap<>();
                List<String> required = new ArrayList<>();
                for (RecordComponent rc : c.getRecordComponents()) {
                    props.put(rc.getName(), schema(rc.getGenericType(), schemas));
                    if (rc.getType().isPrimitive()) {
                        required.add(rc.getName());
                    }
                }
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("type", "object");
                s.put("properties", props);
                if (!required.isEmpty()) {
                    s.put("required", required);
                }
                s.put("additionalProperties", false);
                schemas.put(name, s);
            }
            return Map.of("$ref", "#/components/schemas/" + name);
        }
        throw new IllegalArgumentException("no schema for " + c);
    }

    private static String reason(int status) {
        return switch (status) {
            case 400 -> "invalid request (bad JSON or a field that fails validation)";
            case 401 -> "missing or wrong bearer token";
            case 404 -> "no such resource";
            case 409 -> "conflicts with existing resources (overlap, address in use, dependents, reused client token)";
            case 412 -> "If-Match names another version than the current one";
            default -> "error";
        };
    }
}
