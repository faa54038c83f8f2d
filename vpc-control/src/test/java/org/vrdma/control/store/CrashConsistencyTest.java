package org.vrdma.control.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.client.ControlClient;

/**
 * SIGKILL during a stream of writes loses no acknowledged write: a controller in its own JVM takes
 * ENI creates from two clients, is killed mid-stream, is restarted on the same data directory, and
 * every ENI whose create was acknowledged is there with the address it was given. Requests cut off
 * by the kill are retried with their client tokens: each yields exactly one ENI.
 */
class CrashConsistencyTest {
    @TempDir
    Path dir;

    @Test
    void acknowledgedWritesSurviveSigkill() throws Exception {
        Path data = dir.resolve("data");
        Path log = dir.resolve("controller.log");
        Map<String, String> acked = new ConcurrentHashMap<>(); // ENI id -> IP
        Map<String, String> ackedTokens = new ConcurrentHashMap<>(); // token -> ENI id
        Set<String> inFlightTokens = ConcurrentHashMap.newKeySet();
        ConcurrentLinkedQueue<Long> latenciesMicros = new ConcurrentLinkedQueue<>();
        String subnet;

        try (ControllerProcess first = ControllerProcess.start(data, log)) {
            try (ControlClient api = new ControlClient(first.endpoint, first.token)) {
                String vpc = api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0/16"))
                        .json()
                        .path("id")
                        .asText();
                ControlClient.Response s = api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.0.0.0/20"));
                assertThat(s.status()).isEqualTo(201);
                subnet = s.json().path("id").asText();
            }
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int writer = w;
                String sn = subnet;
                writers.add(Thread.ofPlatform().start(() -> {
                    try (ControlClient api = new ControlClient(first.endpoint, first.token)) {
                        for (int i = 0; i < 2_000 && !stop.get(); i++) {
                            String token = "crash-" + writer + "-" + i;
                            inFlightTokens.add(token);
                            long t0 = System.nanoTime();
                            ControlClient.Response r = api.send(
                                    "POST",
                                    "/v1/enis",
                                    Map.of("subnetId", sn, "vrdma", true),
                                    Map.of("Idempotency-Key", token),
                                    Duration.ofSeconds(10));
                            if (r.status() != 201) {
                                return;
                            }
                            latenciesMicros.add((System.nanoTime() - t0) / 1_000);
                            JsonNode eni = r.json();
                            acked.put(eni.path("id").asText(), eni.path("ip").asText());
                            ackedTokens.put(token, eni.path("id").asText());
                            inFlightTokens.remove(token);
                        }
                    } catch (Exception e) {
                        // The controller died under us: the request in flight is unacknowledged.
                    }
                }));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (acked.size() < 150 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            first.kill(); // SIGKILL while both writers are mid-request
            stop.set(true);
            for (Thread t : writers) {
                t.join(Duration.ofSeconds(20));
            }
            assertThat(first.process.isAlive()).isFalse();
        }
        assertThat(acked).hasSizeGreaterThanOrEqualTo(150);

        try (ControllerProcess second = ControllerProcess.start(data, log);
                ControlClient api = new ControlClient(second.endpoint, second.token)) {
            JsonNode items = api.get("/v1/enis?subnetId=" + subnet).json().path("items");
            Map<String, String> stored = new java.util.HashMap<>();
            items.forEach(e -> stored.put(e.path("id").asText(), e.path("ip").asText()));
            for (var e : acked.entrySet()) {
                assertThat(stored).as("acknowledged ENI %s", e.getKey()).containsEntry(e.getKey(), e.getValue());
            }
            assertThat(new HashSet<>(stored.values()))
                    .as("addresses are unique")
                    .hasSize(stored.size());

            // Retrying an acknowledged create replays it; retrying a cut-off one creates it at most once.
            String someToken = ackedTokens.keySet().iterator().next();
            ControlClient.Response replay = api.send(
                    "POST",
                    "/v1/enis",
                    Map.of("subnetId", subnet, "vrdma", true),
                    Map.of("Idempotency-Key", someToken),
                    Duration.ofSeconds(10));
            assertThat(replay.json().path("id").asText()).isEqualTo(ackedTokens.get(someToken));
            for (String token : inFlightTokens) {
                ControlClient.Response r = api.send(
                        "POST",
                        "/v1/enis",
                        Map.of("subnetId", subnet, "vrdma", true),
                        Map.of("Idempotency-Key", token),
                        Duration.ofSeconds(10));
                assertThat(r.status()).isEqualTo(201);
                ControlClient.Response again = api.send(
                        "POST",
                        "/v1/enis",
                        Map.of("subnetId", subnet, "vrdma", true),
                        Map.of("Idempotency-Key", token),
                        Duration.ofSeconds(10));
                assertThat(again.json().path("id").asText())
                        .isEqualTo(r.json().path("id").asText());
            }
        }

        List<Long> sorted = new ArrayList<>(latenciesMicros);
        Collections.sort(sorted);
        System.out.printf(
                "crash test: %d acknowledged creates before SIGKILL, %d in flight; write latency p50 %.2f ms, p99 %.2f ms%n",
                acked.size(),
                inFlightTokens.size(),
                sorted.get(sorted.size() / 2) / 1000.0,
                sorted.get((int) (sorted.size() * 0.99)) / 1000.0);
    }
}
