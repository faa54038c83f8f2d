package org.vrdma.control.api;

import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.vrdma.control.agent.SyncResponse;
import org.vrdma.control.model.ApiException;
import org.vrdma.control.model.Eni;
import org.vrdma.control.model.Host;
import org.vrdma.control.model.QosPolicy;
import org.vrdma.control.model.Requests;
import org.vrdma.control.model.SecurityGroup;
import org.vrdma.control.model.Subnet;
import org.vrdma.control.model.Vpc;
import org.vrdma.control.service.ControlService;
import org.vrdma.control.service.Created;
import org.vrdma.control.service.DesiredStatePublisher;
import org.vrdma.control.service.Json;

/** The route table of the REST API. */
final class RestApi {
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final long MAX_WAIT_MS = 60_000;

    private static final ApiRoute.Param IF_MATCH = new ApiRoute.Param(
            "header",
            "If-Match",
            "string",
            "the resource version (its ETag) the change applies to; 412 if it moved on");
    private static final ApiRoute.Param CLIENT_TOKEN = new ApiRoute.Param(
            "header", IDEMPOTENCY_KEY, "string", "client token: a retry with the same token returns the same resource");

    private final ControlService svc;
    private final DesiredStatePublisher publisher;
    private final Metrics metrics;
    private final Supplier<String> openApi;
    private final List<ApiRoute> routes = new ArrayList<>();

    RestApi(ControlService svc, DesiredStatePublisher publisher, Metrics metrics, Supplier<String> openApi) {
        this.svc = svc;
        this.publisher = publisher;
        this.metrics = metrics;
        this.openApi = openApi;
        build();
    }

    List<ApiRoute> routes() {
        return List.copyOf(routes);
    }

    private void build() {
        add(new ApiRoute(
                "GET",
                "/healthz",
                "health",
                "system",
                "liveness and store revision (no token needed)",
                false,
                null,
                Health.class,
                false,
                200,
                List.of(),
                List.of(),
                ctx -> ctx.json(new Health("ok", svc.store().revision()))));
        add(new ApiRoute(
                "GET",
                "/openapi.json",
                "openapi",
                "system",
                "this document (no token needed)",
                false,
                null,
                null,
                false,
                200,
                List.of(),
                List.of(),
                ctx -> ctx.contentType("application/json").result(openApi.get())));
        add(new ApiRoute(
                "GET",
                "/metrics",
                "metrics",
                "system",
                "Prometheus text-format metrics",
                true,
                null,
                String.class,
                false,
                200,
                List.of(),
                List.of(),
                ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                        .result(metrics.render())));

        crud(
                "vpcs",
                "vpc",
                "VPC",
                Vpc.class,
                Requests.VpcCreate.class,
                Requests.VpcUpdate.class,
                (ctx, token) -> svc.createVpc(body(ctx, Requests.VpcCreate.class), token),
                ctx -> svc.listVpcs(),
                List.of(),
                id -> svc.getVpc(id),
                (ctx, id, v) -> svc.updateVpc(id, body(ctx, Requests.VpcUpdate.class), v),
                (id, v) -> svc.deleteVpc(id, v),
                Vpc::version);
        crud(
                "subnets",
                "subnet",
                "subnet",
                Subnet.class,
                Requests.SubnetCreate.class,
                Requests.SubnetUpdate.class,
                (ctx, token) -> svc.createSubnet(body(ctx, Requests.SubnetCreate.class), token),
                ctx -> svc.listSubnets(ctx.queryParam("vpcId")),
                List.of(filter("vpcId")),
                id -> svc.getSubnet(id),
                (ctx, id, v) -> svc.updateSubnet(id, body(ctx, Requests.SubnetUpdate.class), v),
                (id, v) -> svc.deleteSubnet(id, v),
                Subnet::version);
        crud(
                "hosts",
                "host",
                "host",
                Host.class,
                Requests.HostCreate.class,
                Requests.HostUpdate.class,
                (ctx, token) -> svc.createHost(body(ctx, Requests.HostCreate.class), token),
                ctx -> svc.listHosts(),
                List.of(),
                id -> svc.getHost(id),
                (ctx, id, v) -> svc.updateHost(id, body(ctx, Requests.HostUpdate.class), v),
                (id, v) -> svc.deleteHost(id, v),
                Host::version);
        crud(
                "enis",
                "eni",
                "ENI",
                Eni.class,
                Requests.EniCreate.class,
                Requests.EniUpdate.class,
                (ctx, token) -> svc.createEni(body(ctx, Requests.EniCreate.class), token),
                ctx -> svc.listEnis(ctx.queryParam("vpcId"), ctx.queryParam("subnetId"), ctx.queryParam("hostId")),
                List.of(filter("vpcId"), filter("subnetId"), filter("hostId")),
                id -> svc.getEni(id),
                (ctx, id, v) -> svc.updateEni(id, body(ctx, Requests.EniUpdate.class), v),
                (id, v) -> svc.deleteEni(id, v),
                Eni::version);
        crud(
                "security-groups",
                "securityGroup",
                "security group",
                SecurityGroup.class,
                Requests.SecurityGroupCreate.class,
                Requests.SecurityGroupUpdate.class,
                (ctx, token) -> svc.createSecurityGroup(body(ctx, Requests.SecurityGroupCreate.class), token),
                ctx -> svc.listSecurityGroups(ctx.queryParam("vpcId")),
                List.of(filter("vpcId")),
                id -> svc.getSecurityGroup(id),
                (ctx, id, v) -> svc.updateSecurityGroup(id, body(ctx, Requests.SecurityGroupUpdate.class), v),
                (id, v) -> svc.deleteSecurityGroup(id, v),
                SecurityGroup::version);
        add(new ApiRoute(
                "POST",
                "/v1/security-groups/{id}/rules",
                "addSecurityGroupRule",
                "security groups",
                "add an allow rule to a security group",
                true,
                Requests.RuleSpec.class,
                SecurityGroup.class,
                false,
                201,
                List.of(IF_MATCH),
                List.of(400, 404, 412),
                ctx -> {
                    SecurityGroup g =
                            svc.addRule(ctx.pathParam("id"), body(ctx, Requests.RuleSpec.class), ifMatch(ctx));
                    ctx.status(201).header("ETag", etag(g.version())).json(g);
                }));
        add(new ApiRoute(
                "DELETE",
                "/v1/security-groups/{id}/rules/{ruleId}",
                "removeSecurityGroupRule",
                "security groups",
                "remove a rule from a security group",
                true,
                null,
                SecurityGroup.class,
                false,
                200,
                List.of(IF_MATCH),
                List.of(404, 412),
                ctx -> {
                    SecurityGroup g = svc.removeRule(ctx.pathParam("id"), ctx.pathParam("ruleId"), ifMatch(ctx));
                    ctx.header("ETag", etag(g.version())).json(g);
                }));
        crud(
                "qos-policies",
                "qosPolicy",
                "QoS policy",
                QosPolicy.class,
                Requests.QosPolicyCreate.class,
                Requests.QosPolicyUpdate.class,
                (ctx, token) -> svc.createQosPolicy(body(ctx, Requests.QosPolicyCreate.class), token),
                ctx -> svc.listQosPolicies(),
                List.of(),
                id -> svc.getQosPolicy(id),
                (ctx, id, v) -> svc.updateQosPolicy(id, body(ctx, Requests.QosPolicyUpdate.class), v),
                (id, v) -> svc.deleteQosPolicy(id, v),
                QosPolicy::version);

        add(new ApiRoute(
                "GET",
                "/v1/hosts/{id}/desired-state",
                "pollDesiredState",
                "agents",
                "a host agent's long poll: its full desired state, the deltas since its version, or 'unchanged' after waiting",
                true,
                null,
                SyncResponse.class,
                false,
                200,
                List.of(
                        new ApiRoute.Param(
                                "query", "since", "integer", "the version the agent has (-1 or absent: none)"),
                        new ApiRoute.Param(
                                "query", "waitMs", "integer", "how long to wait for a change when current (0..60000)")),
                List.of(400, 404),
                this::poll));
    }

    private void poll(Context ctx) throws InterruptedException {
        String hostId = ctx.pathParam("id");
        long since = longParam(ctx, "since", -1);
        long waitMs = longParam(ctx, "waitMs", 0);
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            throw ApiException.invalid("waitMs", "waitMs must be in 0.." + MAX_WAIT_MS);
        }
        SyncResponse r = publisher.poll(hostId, since, waitMs);
        if (r == null) {
            // The host may be new and not yet published: check the store before saying 404.
            svc.getHost(hostId);
            r = publisher.poll(hostId, since, Math.min(waitMs, 1000));
            if (r == null) {
                throw new ApiException(503, "not_ready", "id", "host " + hostId + " is not published yet; retry");
            }
        }
        ctx.json(r);
    }

    private static long longParam(Context ctx, String name, long dflt) {
        String v = ctx.queryParam(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(name, name + " must be an integer, not '" + v + "'");
        }
    }

    interface Create<T> {
        Created<T> create(Context ctx, String token) throws Exception;
    }

    interface Update<T> {
        T update(Context ctx, String id, Long version) throws Exception;
    }

    interface Delete {
        void delete(String id, Long version);
    }

    private <T> void crud(
            String collection,
            String singular,
            String label,
            Class<T> type,
            Class<?> createType,
            Class<?> updateType,
            Create<T> create,
            java.util.function.Function<Context, List<T>> list,
            List<ApiRoute.Param> filters,
            java.util.function.Function<String, T> get,
            Update<T> update,
            Delete delete,
            java.util.function.ToLongFunction<T> version) {
        String base = "/v1/" + collection;
        String cap = Character.toUpperCase(singular.charAt(0)) + singular.substring(1);
        String tag = collection.replace('-', ' ');
        add(new ApiRoute(
                "POST",
                base,
                "create" + cap,
                tag,
                "create a " + label,
                true,
                createType,
                type,
                false,
                201,
                List.of(CLIENT_TOKEN),
                List.of(400, 404, 409),
                ctx -> {
                    Created<T> c = create.create(ctx, ctx.header(IDEMPOTENCY_KEY));
                    if (c.replayed()) {
                        ctx.header("Idempotent-Replayed", "true");
                    }
                    ctx.status(201)
                            .header("ETag", etag(version.applyAsLong(c.resource())))
                            .json(c.resource());
                }));
        add(new ApiRoute(
                "GET",
                base,
                "list" + cap + "s",
                tag,
                "list " + label + "s",
                true,
                null,
                type,
                true,
                200,
                filters,
                List.of(),
                ctx -> ctx.json(Map.of("items", list.apply(ctx)))));
        add(new ApiRoute(
                "GET",
                base + "/{id}",
                "get" + cap,
                tag,
                "read a " + label,
                true,
                null,
                type,
                false,
                200,
                List.of(),
                List.of(404),
                ctx -> {
                    T t = get.apply(ctx.pathParam("id"));
                    ctx.header("ETag", etag(version.applyAsLong(t))).json(t);
                }));
        add(new ApiRoute(
                "PATCH",
                base + "/{id}",
                "update" + cap,
                tag,
                "change a " + label + "'s mutable fields (absent fields keep their value)",
                true,
                updateType,
                type,
                false,
                200,
                List.of(IF_MATCH),
                List.of(400, 404, 409, 412),
                ctx -> {
                    T t = update.update(ctx, ctx.pathParam("id"), ifMatch(ctx));
                    ctx.header("ETag", etag(version.applyAsLong(t))).json(t);
                }));
        add(new ApiRoute(
                "DELETE",
                base + "/{id}",
                "delete" + cap,
                tag,
                "delete a " + label + " (409 while other resources use it)",
                true,
                null,
                null,
                false,
                204,
                List.of(IF_MATCH),
                List.of(404, 409, 412),
                ctx -> {
                    delete.delete(ctx.pathParam("id"), ifMatch(ctx));
                    ctx.status(204);
                }));
    }

    private void add(ApiRoute r) {
        routes.add(r);
    }

    private static ApiRoute.Param filter(String name) {
        return new ApiRoute.Param("query", name, "string", "only those with this " + name);
    }

    static String etag(long version) {
        return "\"" + version + "\"";
    }

    /** The version an If-Match header names: null when absent or '*'. */
    static Long ifMatch(Context ctx) {
        String h = ctx.header("If-Match");
        if (h == null || h.strip().equals("*")) {
            return null;
        }
        String v = h.strip();
        if (v.startsWith("W/")) {
            v = v.substring(2);
        }
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
            v = v.substring(1, v.length() - 1);
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(
                    "If-Match", "If-Match must be an ETag this API returned, such as \"3\"; not " + h);
        }
    }

    static <T> T body(Context ctx, Class<T> type) throws Exception {
        String body = ctx.body();
        if (body.isBlank()) {
            throw new ApiException(400, "malformed_json", null, "a JSON object body is required");
        }
        T value = Json.MAPPER.readValue(body, type);
        if (value == null) {
            throw new ApiException(400, "malformed_json", null, "a JSON object body is required, not null");
        }
        return value;
    }

    /** The answer of {@code /healthz}. */
    record Health(String status, long revision) {}
}
