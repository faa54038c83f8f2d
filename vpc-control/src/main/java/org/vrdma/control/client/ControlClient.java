package org.vrdma.control.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.vrdma.control.service.Json;

/**
 * A small client of the REST API over {@link HttpClient}: the CLI and the host agents use it. It
 * returns every answer, errors included, as a {@link Response}; only transport failures throw.
 */
public final class ControlClient implements AutoCloseable {
    private final URI endpoint;
    private final String token;
    private final HttpClient http;

    public ControlClient(String endpoint, String token) {
        this.endpoint = URI.create(endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint);
        this.token = token;
        this.http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    /** An HTTP answer: status, headers (first value of each, lower-case names) and the body. */
    public record Response(int status, Map<String, String> headers, String body) {
        public boolean ok() {
            return status >= 200 && status < 300;
        }

        /** The body as JSON, or a missing node when it is empty or not JSON. */
        public JsonNode json() {
            if (body == null || body.isBlank()) {
                return MissingNode.getInstance();
            }
            try {
                return Json.MAPPER.readTree(body);
            } catch (IOException e) {
                return MissingNode.getInstance();
            }
        }

        public <T> T as(Class<T> type) {
            return Json.read(body, type);
        }

        /** "code (field): message" of an error body, or the raw body. */
        public String errorText() {
            JsonNode e = json().path("error");
            if (e.isMissingNode()) {
                return "HTTP " + status + (body == null || body.isBlank() ? "" : ": " + body.strip());
            }
            String field = e.path("field").isTextual() ? " (" + e.path("field").asText() + ")" : "";
            return e.path("code").asText() + field + ": " + e.path("message").asText();
        }

        public String header(String name) {
            return headers.get(name.toLowerCase());
        }
    }

    public Response get(String path) throws IOException, InterruptedException {
        return send("GET", path, null, Map.of(), Duration.ofSeconds(30));
    }

    public Response post(String path, Object body) throws IOException, InterruptedException {
        return send("POST", path, body, Map.of(), Duration.ofSeconds(30));
    }

    public Response patch(String path, Object body) throws IOException, InterruptedException {
        return send("PATCH", path, body, Map.of(), Duration.ofSeconds(30));
    }

    public Response delete(String path) throws IOException, InterruptedException {
        return send("DELETE", path, null, Map.of(), Duration.ofSeconds(30));
    }

    /**
     * Sends a request; {@code body} is a JSON string sent as is, or an object serialized as JSON, or
     * null for none.
     */
    public Response send(String method, String path, Object body, Map<String, String> headers, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(endpoint.resolve(path)).timeout(timeout);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        headers.forEach(b::header);
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            String json = body instanceof String s ? s : Json.write(body);
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        Map<String, String> h = new LinkedHashMap<>();
        r.headers().map().forEach((k, v) -> h.put(k.toLowerCase(), v.isEmpty() ? "" : v.getFirst()));
        return new Response(r.statusCode(), h, r.body());
    }

    public URI endpoint() {
        return endpoint;
    }

    @Override
    public void close() {
        http.shutdownNow();
    }
}
