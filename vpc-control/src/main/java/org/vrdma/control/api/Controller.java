package org.vrdma.control.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.json.JavalinJackson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.vrdma.control.model.ApiException;
import org.vrdma.control.service.ControlService;
import org.vrdma.control.service.DesiredStatePublisher;
import org.vrdma.control.service.Json;
import org.vrdma.control.store.SqliteStore;

/**
 * The controller process: the SQLite store in a data directory, the resource service, the
 * desired-state publisher and the REST API on Javalin, bound to one address. {@link #start} opens
 * everything; {@link #close} stops it.
 */
public final class Controller implements AutoCloseable {
    public static final String VERSION = "0.1.0";

    private final Path dataDir;
    private final String host;
    private final SqliteStore store;
    private final ControlService service;
    private final DesiredStatePublisher publisher;
    private final Metrics metrics;
    private final byte[] token;
    private final List<ApiRoute> routes;
    private final List<String> registered = Collections.synchronizedList(new ArrayList<>());
    private final String openApiJson;
    private final Javalin app;

    private Controller(Path dataDir, String host, int port) throws IOException {
        this.dataDir = dataDir;
        this.host = host;
        Files.createDirectories(dataDir);
        try {
            Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException ignored) {
            // Not a POSIX file system: nothing to tighten.
        }
        this.token = TokenFile.loadOrCreate(dataDir).getBytes(StandardCharsets.UTF_8);
        this.metrics = new Metrics();
        this.store = SqliteStore.open(dataDir, metrics);
        this.service = new ControlService(store);
        this.publisher = new DesiredStatePublisher(store);
        service.onCommit(publisher::commit);
        metrics.gauge(
                "vrdma_control_resources",
                "Resources in the store, by kind.",
                () -> store.read(v -> v.countByKind()).entrySet().stream()
                        .collect(Collectors.toMap(
                                e -> "kind=\"" + e.getKey() + "\"",
                                e -> (Number) e.getValue(),
                                (a, b) -> a,
                                LinkedHashMap::new)));
        metrics.gauge(
                "vrdma_control_store_revision",
                "Revision of the last committed write.",
                () -> Map.of("", store.revision()));
        metrics.gauge(
                "vrdma_control_desired_state_revision",
                "Store revision the hosts' desired states were last computed at.",
                () -> Map.of("", publisher.publishedRevision()));
        metrics.gauge(
                "vrdma_control_hosts", "Hosts with a published desired state.", () -> Map.of("", publisher.hosts()));
        this.routes = new RestApi(service, publisher, metrics, this::openApiJson).routes();
        this.openApiJson = Json.write(OpenApiDocument.build(routes, VERSION));
        this.app = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.startup.showOldJavalinVersionWarning = false;
            cfg.concurrency.useVirtualThreads = true;
            cfg.jsonMapper(new JavalinJackson(Json.MAPPER, true));
            cfg.http.maxRequestSize = 1_000_000L;
            cfg.events.handlerAdded(meta -> registered.add(meta.getHttpMethod() + " " + meta.getPath()));
            for (ApiRoute r : routes) {
                cfg.routes.addHttpHandler(HandlerType.findOrCreate(r.method()), r.path(), ctx -> handle(r, ctx));
            }
            cfg.routes.error(404, ctx -> {
                if (ctx.attribute("vrdma.handled") == null) {
                    writeError(
                            ctx,
                            new ApiException(404, "not_found", null, "no route " + ctx.method() + " " + ctx.path()));
                }
            });
            cfg.routes.error(405, ctx -> {
                if (ctx.attribute("vrdma.handled") == null) {
                    writeError(
                            ctx,
                            new ApiException(
                                    405,
                                    "method_not_allowed",
                                    null,
                                    ctx.method() + " is not allowed on " + ctx.path()));
                }
            });
        });
        try {
            app.start(host, port);
        } catch (RuntimeException e) {
            // The address is taken or cannot be bound: give the store back, say why, no trace.
            publisher.close();
            store.close();
            throw new IOException("cannot listen on " + host + ":" + port + ": " + rootMessage(e), e);
        }
    }

    /**
     * Starts a controller on {@code host:port} (port 0: any free port) keeping its state in {@code
     * dataDir}; an address that cannot be listened on (in use, out of range) is an {@link
     * IOException} saying so, found before the web server starts where it can be.
     */
    public static Controller start(Path dataDir, String host, int port) throws IOException {
        if (port < 0 || port > 0xFFFF) {
            throw new IOException("cannot listen on " + host + ":" + port + ": port out of range 0..65535");
        }
        if (port != 0) {
            // Checked first so that a port in use is one line, not the web server's logged stack trace.
            try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName(host), port));
            } catch (IOException e) {
                throw new IOException("cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
            }
        }
        return new Controller(dataDir, host, port);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    private String openApiJson() {
        return openApiJson;
    }

    private void handle(ApiRoute route, Context ctx) {
        ctx.attribute("vrdma.handled", Boolean.TRUE);
        try {
            if (route.authenticated()) {
                authenticate(ctx);
            }
            route.handler().handle(ctx);
        } catch (ApiException e) {
            writeError(ctx, e);
        } catch (UnrecognizedPropertyException e) {
            writeError(ctx, ApiException.invalid(e.getPropertyName(), "unknown field '" + e.getPropertyName() + "'"));
        } catch (JsonMappingException e) {
            String field = e.getPath().stream()
                    .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                    .collect(Collectors.joining("."))
                    .replace(".[", "[");
            writeError(
                    ctx,
                    new ApiException(
                            400,
                            field.isEmpty() ? "malformed_json" : "invalid_argument",
                            field.isEmpty() ? null : field,
                            field.isEmpty()
                                    ? "the body is not the JSON object expected: " + e.getOriginalMessage()
                                    : "'" + field + "' has the wrong type: " + e.getOriginalMessage()));
        } catch (JsonProcessingException e) {
            writeError(
                    ctx,
                    new ApiException(
                            400, "malformed_json", null, "the body is not valid JSON: " + e.getOriginalMessage()));
        } catch (Exception e) {
            writeError(ctx, new ApiException(500, "internal", null, "internal error: " + e));
        } finally {
            metrics.request(route.method(), route.path(), ctx.statusCode());
        }
    }

    private void authenticate(Context ctx) {
        String header = ctx.header("Authorization");
        if (header == null || header.isBlank()) {
            ctx.header("WWW-Authenticate", "Bearer");
            throw new ApiException(
                    401,
                    "unauthenticated",
                    "Authorization",
                    "a bearer token is required (Authorization: Bearer <token>)");
        }
        if (!header.regionMatches(true, 0, "Bearer ", 0, 7)
                || !MessageDigest.isEqual(header.substring(7).strip().getBytes(StandardCharsets.UTF_8), token)) {
            ctx.header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
            throw new ApiException(401, "unauthenticated", "Authorization", "the bearer token is not valid");
        }
    }

    static void writeError(Context ctx, ApiException e) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", e.code());
        error.put("field", e.field());
        error.put("message", e.getMessage());
        ctx.status(e.status());
        ctx.contentType("application/json");
        ctx.result(Json.write(Map.of("error", error)));
    }

    public String endpoint() {
        return "http://" + host + ":" + app.port();
    }

    public int port() {
        return app.port();
    }

    public Path dataDir() {
        return dataDir;
    }

    public Path tokenFile() {
        return dataDir.resolve(TokenFile.FILE_NAME);
    }

    public String token() {
        return new String(token, StandardCharsets.UTF_8);
    }

    public ControlService service() {
        return service;
    }

    public DesiredStatePublisher publisher() {
        return publisher;
    }

    public List<ApiRoute> routes() {
        return routes;
    }

    /** Every (method, path) Javalin registered, as "GET /v1/vpcs". */
    public List<String> registeredRoutes() {
        return List.copyOf(registered);
    }

    @Override
    public void close() {
        // Waiting polls return first, so stopping the server does not wait for them.
        publisher.close();
        try {
            app.stop();
        } finally {
            store.close();
        }
    }
}
