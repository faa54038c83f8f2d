package org.vrdma.control.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.client.ControlClient;
import org.vrdma.control.client.ControlClient.Response;

/** The REST API over real HTTP: auth, documents, CRUD, concurrency control and idempotency. */
class ApiContractTest {
    @TempDir
    static Path dir;

    static Controller controller;
    static ControlClient api;
    static ControlClient anonymous;

    @BeforeAll
    static void start() throws Exception {
        controller = Controller.start(dir.resolve("data"), "127.0.0.1", 0);
        api = new ControlClient(controller.endpoint(), controller.token());
        anonymous = new ControlClient(controller.endpoint(), null);
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
            anonymous.close();
        }
        if (controller != null) {
            controller.close();
        }
    }

    @Test
    void tokenIsRandomHexStoredOwnerOnly() throws Exception {
        Path file = controller.tokenFile();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(Files.readString(file).strip()).isEqualTo(controller.token()).matches("[0-9a-f]{64}");
    }

    @Test
    void healthNeedsNoToken() throws Exception {
        Response r = anonymous.get("/healthz");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.json().path("status").asText()).isEqualTo("ok");
    }

    @Test
    void everyAuthenticatedRouteRefusesMissingAndWrongTokens() throws Exception {
        int checked = 0;
        try (ControlClient wrong = new ControlClient(controller.endpoint(), "0".repeat(64))) {
            for (ApiRoute route : controller.routes()) {
                if (!route.authenticated()) {
                    continue;
                }
                String path = route.path().replaceAll("\\{[^}]+}", "x");
                Object body = route.requestBody() == null ? null : "{}";
                for (ControlClient c : List.of(anonymous, wrong)) {
                    Response r = c.send(route.method(), path, body, Map.of(), Duration.ofSeconds(10));
                    assertThat(r.status()).as(route.method() + " " + path).isEqualTo(401);
                    assertThat(r.json().path("error").path("code").asText()).isEqualTo("unauthenticated");
                    assertThat(r.header("WWW-Authenticate")).startsWith("Bearer");
                }
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(30);
        assertThat(controller.routes().stream().filter(r -> !r.authenticated()).map(ApiRoute::path))
                .containsExactlyInAnyOrder("/healthz", "/openapi.json");
    }

    @Test
    void openApiDocumentDescribesEveryRegisteredRouteAndSchema() throws Exception {
        Response r = anonymous.get("/openapi.json");
        assertThat(r.status()).isEqualTo(200);
        JsonNode doc = r.json();
        assertThat(doc.path("openapi").asText()).startsWith("3.");
        List<String> registered = controller.registeredRoutes();
        assertThat(registered).hasSize(controller.routes().size());
        for (String route : registered) {
            String[] mp = route.split(" ", 2);
            assertThat(doc.path("paths").path(mp[1]).has(mp[0].toLowerCase()))
                    .as("%s is in /openapi.json", route)
                    .isTrue();
        }
        // Every $ref resolves, and every operation id is unique.
        Set<String> refs = new HashSet<>();
        collectRefs(doc, refs);
        for (String ref : refs) {
            String name = ref.substring("#/components/schemas/".length());
            assertThat(doc.path("components").path("schemas").has(name)).as(ref).isTrue();
        }
        assertThat(refs)
                .contains("#/components/schemas/Eni", "#/components/schemas/EniCreate", "#/components/schemas/Error");
        List<String> ids = new ArrayList<>();
        doc.path("paths")
                .forEach(p -> p.forEach(op -> ids.add(op.path("operationId").asText())));
        assertThat(ids).doesNotHaveDuplicates().hasSize(registered.size());
    }

    private static void collectRefs(JsonNode n, Set<String> out) {
        if (n.isObject()) {
            n.properties().forEach(e -> {
                if (e.getKey().equals("$ref")) {
                    out.add(e.getValue().asText());
                } else {
                    collectRefs(e.getValue(), out);
                }
            });
        } else if (n.isArray()) {
            n.forEach(c -> collectRefs(c, out));
        }
    }

    @Test
    void vpcLifecycleWithEtagsAndIfMatch() throws Exception {
        Response created = api.post("/v1/vpcs", Map.of("name", "blue", "cidr", "10.1.0.0/16"));
        assertThat(created.status()).isEqualTo(201);
        JsonNode vpc = created.json();
        String id = vpc.path("id").asText();
        assertThat(id).startsWith("vpc-");
        assertThat(vpc.path("vni").asInt()).isBetween(1000, (1 << 24) - 1);
        assertThat(created.header("ETag")).isEqualTo("\"1\"");

        Response got = api.get("/v1/vpcs/" + id);
        assertThat(got.status()).isEqualTo(200);
        assertThat(got.json()).isEqualTo(vpc);

        Response renamed = api.send(
                "PATCH", "/v1/vpcs/" + id, Map.of("name", "green"), Map.of("If-Match", "\"1\""), Duration.ofSeconds(5));
        assertThat(renamed.status()).isEqualTo(200);
        assertThat(renamed.json().path("name").asText()).isEqualTo("green");
        assertThat(renamed.header("ETag")).isEqualTo("\"2\"");

        Response stale = api.send(
                "PATCH", "/v1/vpcs/" + id, Map.of("name", "red"), Map.of("If-Match", "\"1\""), Duration.ofSeconds(5));
        assertThat(stale.status()).isEqualTo(412);
        assertThat(stale.json().path("error").path("code").asText()).isEqualTo("version_mismatch");
        assertThat(stale.json().path("error").path("field").asText()).isEqualTo("If-Match");
        assertThat(api.get("/v1/vpcs/" + id).json().path("name").asText()).isEqualTo("green");

        Response staleDelete =
                api.send("DELETE", "/v1/vpcs/" + id, null, Map.of("If-Match", "\"1\""), Duration.ofSeconds(5));
        assertThat(staleDelete.status()).isEqualTo(412);

        assertThat(api.get("/v1/vpcs").json().path("items").findValuesAsText("id"))
                .contains(id);
        Response deleted =
                api.send("DELETE", "/v1/vpcs/" + id, null, Map.of("If-Match", "\"2\""), Duration.ofSeconds(5));
        assertThat(deleted.status()).isEqualTo(204);
        Response gone = api.get("/v1/vpcs/" + id);
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.json().path("error").path("code").asText()).isEqualTo("not_found");
        assertThat(api.delete("/v1/vpcs/" + id).status()).isEqualTo(404);
    }

    @Test
    void createsWithTheSameClientTokenAreIdempotent() throws Exception {
        Map<String, String> key = Map.of("Idempotency-Key", "create-vpc-7f3a");
        Map<String, Object> body = Map.of("name", "idem", "cidr", "10.9.0.0/16");
        Response first = api.send("POST", "/v1/vpcs", body, key, Duration.ofSeconds(5));
        Response again = api.send("POST", "/v1/vpcs", body, key, Duration.ofSeconds(5));
        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.json()).isEqualTo(first.json());
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        long same = api.get("/v1/vpcs").json().path("items").findValuesAsText("name").stream()
                .filter("idem"::equals)
                .count();
        assertThat(same).isEqualTo(1);

        Response other = api.send(
                "POST", "/v1/vpcs", Map.of("name", "idem2", "cidr", "10.9.0.0/16"), key, Duration.ofSeconds(5));
        assertThat(other.status()).isEqualTo(409);
        assertThat(other.json().path("error").path("code").asText()).isEqualTo("idempotency_key_reused");
        assertThat(other.json().path("error").path("field").asText()).isEqualTo("Idempotency-Key");
    }

    @Test
    void unknownRoutesAndMalformedBodiesGetJsonErrors() throws Exception {
        Response nowhere = api.get("/v1/nothing-here");
        assertThat(nowhere.status()).isEqualTo(404);
        assertThat(nowhere.json().path("error").path("code").asText()).isEqualTo("not_found");

        Response bad = api.post("/v1/vpcs", "{\"cidr\": ");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().path("error").path("code").asText()).isEqualTo("malformed_json");

        Response empty = api.post("/v1/vpcs", "");
        assertThat(empty.status()).isEqualTo(400);
        assertThat(empty.json().path("error").path("code").asText()).isEqualTo("malformed_json");

        Response unknownField = api.post("/v1/vpcs", "{\"cidr\": \"10.0.0.0/16\", \"colour\": \"red\"}");
        assertThat(unknownField.status()).isEqualTo(400);
        assertThat(unknownField.json().path("error").path("field").asText()).isEqualTo("colour");

        Response wrongType = api.post("/v1/qos-policies", "{\"bandwidthMbps\": \"fast\"}");
        assertThat(wrongType.status()).isEqualTo(400);
        assertThat(wrongType.json().path("error").path("field").asText()).isEqualTo("bandwidthMbps");

        Response badIfMatch =
                api.send("PATCH", "/v1/vpcs/vpc-x", "{}", Map.of("If-Match", "yesterday"), Duration.ofSeconds(5));
        assertThat(badIfMatch.status()).isEqualTo(400);
        assertThat(badIfMatch.json().path("error").path("field").asText()).isEqualTo("If-Match");
    }

    @Test
    void metricsAreInPrometheusTextFormat() throws Exception {
        api.get("/v1/vpcs");
        anonymous.get("/v1/vpcs");
        api.post("/v1/qos-policies", Map.of("bandwidthMbps", 1000));
        Response m = api.get("/metrics");
        assertThat(m.status()).isEqualTo(200);
        assertThat(m.header("Content-Type")).startsWith("text/plain");
        String text = m.body();
        assertThat(text)
                .contains("# TYPE vrdma_control_http_requests_total counter")
                .containsPattern(
                        "vrdma_control_http_requests_total\\{method=\"GET\",route=\"/v1/vpcs\",status=\"200\"} [1-9]")
                .containsPattern(
                        "vrdma_control_http_requests_total\\{method=\"GET\",route=\"/v1/vpcs\",status=\"401\"} [1-9]")
                .contains("# TYPE vrdma_control_store_operation_seconds histogram")
                .containsPattern(
                        "vrdma_control_store_operation_seconds_bucket\\{operation=\"write\",le=\"\\+Inf\"} [1-9]")
                .containsPattern("vrdma_control_resources\\{kind=\"qos_policy\"} [1-9]")
                .contains("vrdma_control_store_revision ");
        for (String line : text.split("\n")) {
            assertThat(line).matches("# (HELP|TYPE) .*|[a-z_]+(\\{.*})? [0-9.E+-]+");
        }
    }
}
