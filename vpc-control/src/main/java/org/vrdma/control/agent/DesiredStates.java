package org.vrdma.control.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.vrdma.control.service.Json;

/** Diffs of host states, and applying them to a state and to a {@link DataPlaneProgrammer}. */
public final class DesiredStates {
    /** Kinds in dependency order: a later kind may refer to an earlier one. */
    public static final List<String> KINDS = List.of("vpc", "qosPolicy", "securityGroup", "eni", "route");

    private DesiredStates() {}

    /** The changes from {@code from} to {@code to}: removals (dependents first), then upserts. */
    public static StateDelta diff(HostDesiredState from, HostDesiredState to) {
        List<Change> changes = new ArrayList<>();
        for (String kind : KINDS.reversed()) {
            Map<String, ?> a = section(from, kind);
            Map<String, ?> b = section(to, kind);
            for (String id : a.keySet()) {
                if (!b.containsKey(id)) {
                    changes.add(new Change(Change.REMOVE, kind, id, null));
                }
            }
        }
        for (String kind : KINDS) {
            Map<String, ?> a = section(from, kind);
            Map<String, ?> b = section(to, kind);
            for (var e : b.entrySet()) {
                if (!Objects.equals(a.get(e.getKey()), e.getValue())) {
                    changes.add(new Change(Change.UPSERT, kind, e.getKey(), Json.MAPPER.valueToTree(e.getValue())));
                }
            }
        }
        return new StateDelta(from.version(), to.version(), List.copyOf(changes));
    }

    /**
     * Applies a delta to a state and, when {@code programmer} is not null, programs each change.
     * The delta must start at the state's version.
     */
    public static HostDesiredState apply(HostDesiredState state, StateDelta delta, DataPlaneProgrammer programmer) {
        if (delta.fromVersion() != state.version()) {
            throw new IllegalArgumentException(
                    "delta from version " + delta.fromVersion() + " does not apply to version " + state.version());
        }
        Map<String, VpcConfig> vpcs = new HashMap<>(state.vpcs());
        Map<String, EniConfig> enis = new HashMap<>(state.enis());
        Map<String, RouteConfig> routes = new HashMap<>(state.routes());
        Map<String, SecurityGroupConfig> groups = new HashMap<>(state.securityGroups());
        Map<String, QosConfig> qos = new HashMap<>(state.qosPolicies());
        for (Change c : delta.changes()) {
            switch (c.kind()) {
                case "vpc" -> change(vpcs, c, VpcConfig.class, programmer, p -> p::upsertVpc, p -> p::removeVpc);
                case "qosPolicy" ->
                    change(qos, c, QosConfig.class, programmer, p -> p::upsertQosPolicy, p -> p::removeQosPolicy);
                case "securityGroup" ->
                    change(
                            groups,
                            c,
                            SecurityGroupConfig.class,
                            programmer,
                            p -> p::upsertSecurityGroup,
                            p -> p::removeSecurityGroup);
                case "eni" -> change(enis, c, EniConfig.class, programmer, p -> p::upsertEni, p -> p::removeEni);
                case "route" ->
                    change(routes, c, RouteConfig.class, programmer, p -> p::upsertRoute, p -> p::removeRoute);
                default -> throw new IllegalArgumentException("unknown kind " + c.kind());
            }
        }
        return new HostDesiredState(state.hostId(), delta.version(), vpcs, enis, routes, groups, qos);
    }

    private static <T> void change(
            Map<String, T> section,
            Change c,
            Class<T> type,
            DataPlaneProgrammer programmer,
            Function<DataPlaneProgrammer, java.util.function.Consumer<T>> upsert,
            Function<DataPlaneProgrammer, java.util.function.Consumer<String>> remove) {
        if (c.op().equals(Change.UPSERT)) {
            T value = convert(c.value(), type);
            section.put(c.id(), value);
            if (programmer != null) {
                upsert.apply(programmer).accept(value);
            }
        } else if (c.op().equals(Change.REMOVE)) {
            section.remove(c.id());
            if (programmer != null) {
                remove.apply(programmer).accept(c.id());
            }
        } else {
            throw new IllegalArgumentException("unknown change op " + c.op());
        }
    }

    private static <T> T convert(JsonNode node, Class<T> type) {
        try {
            return Json.MAPPER.treeToValue(node, type);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("bad " + type.getSimpleName() + " in a delta: " + e.getMessage(), e);
        }
    }

    private static Map<String, ?> section(HostDesiredState s, String kind) {
        return switch (kind) {
            case "vpc" -> s.vpcs();
            case "qosPolicy" -> s.qosPolicies();
            case "securityGroup" -> s.securityGroups();
            case "eni" -> s.enis();
            case "route" -> s.routes();
            default -> throw new IllegalArgumentException(kind);
        };
    }
}
