package org.vrdma.control.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The resource commands: each talks to the REST API and prints a table or JSON. */
public final class Resources {
    private Resources() {}

    static Map<String, String> headers(String clientToken, String ifMatch) {
        Map<String, String> h = new LinkedHashMap<>();
        if (clientToken != null) {
            h.put("Idempotency-Key", clientToken);
        }
        if (ifMatch != null) {
            h.put("If-Match", "\"" + ifMatch + "\"");
        }
        return h;
    }

    static Map<String, Object> body(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            if (kv[i + 1] != null) {
                m.put((String) kv[i], kv[i + 1]);
            }
        }
        return m;
    }

    @Command(name = "vpc", mixinStandardHelpOptions = true, description = "VPCs: create, list, get, update, delete.")
    public static final class VpcCommand {
        static final List<String> COLUMNS = List.of("id", "name", "cidr", "vni", "version");

        @Mixin
        ApiOptions api;

        @Command(description = "Create a VPC; a unique VNI is allocated.")
        int create(
                @Option(names = "--cidr", required = true, description = "address space, e.g. 10.0.0.0/16") String cidr,
                @Option(names = "--name") String name,
                @Option(names = "--client-token", description = "retries with the same token create one VPC")
                        String token) {
            return api.call("POST", "/v1/vpcs", body("name", name, "cidr", cidr), headers(token, null), COLUMNS);
        }

        @Command(description = "List VPCs.")
        int list() {
            return api.call("GET", "/v1/vpcs", null, Map.of(), COLUMNS);
        }

        @Command(description = "Show a VPC.")
        int get(@Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/vpcs/" + id, null, Map.of(), COLUMNS);
        }

        @Command(description = "Rename a VPC.")
        int update(
                @Parameters(paramLabel = "ID") String id,
                @Option(names = "--name", required = true) String name,
                @Option(names = "--if-match", description = "only if the VPC is at this version") String ifMatch) {
            return api.call("PATCH", "/v1/vpcs/" + id, body("name", name), headers(null, ifMatch), COLUMNS);
        }

        @Command(description = "Delete a VPC (refused while it has subnets, ENIs or security groups).")
        int delete(@Parameters(paramLabel = "ID") String id, @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/vpcs/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }

    @Command(name = "subnet", mixinStandardHelpOptions = true, description = "Subnets: create, list, get, delete.")
    public static final class SubnetCommand {
        static final List<String> COLUMNS = List.of("id", "name", "vpcId", "cidr", "gatewayIp", "version");

        @Mixin
        ApiOptions api;

        @Command(description = "Create a subnet inside a VPC's CIDR.")
        int create(
                @Option(names = "--vpc", required = true) String vpc,
                @Option(names = "--cidr", required = true) String cidr,
                @Option(names = "--name") String name,
                @Option(names = "--client-token") String token) {
            return api.call(
                    "POST",
                    "/v1/subnets",
                    body("name", name, "vpcId", vpc, "cidr", cidr),
                    headers(token, null),
                    COLUMNS);
        }

        @Command(description = "List subnets.")
        int list(@Option(names = "--vpc") String vpc) {
            return api.call("GET", "/v1/subnets" + (vpc == null ? "" : "?vpcId=" + vpc), null, Map.of(), COLUMNS);
        }

        @Command(description = "Show a subnet.")
        int get(@Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/subnets/" + id, null, Map.of(), COLUMNS);
        }

        @Command(description = "Delete a subnet (refused while it has ENIs).")
        int delete(@Parameters(paramLabel = "ID") String id, @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/subnets/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }

    @Command(
            name = "host",
            mixinStandardHelpOptions = true,
            description = "Hosts (vSwitch agents): create, list, get, delete.")
    // Open so that the launcher's `host` command can add running a host to the same name.
    public static class HostCommand {
        static final List<String> COLUMNS = List.of("id", "name", "underlayIp", "underlayPort", "version");

        // The API options go on each subcommand, not on `host` itself: running a host does not use them.
        @Command(description = "Register a host by its underlay address.")
        public int create(
                @Mixin ApiOptions api,
                @Option(names = "--underlay-ip", required = true) String ip,
                @Option(names = "--underlay-port", description = "Geneve UDP port (default 6081)") Integer port,
                @Option(names = "--name") String name,
                @Option(names = "--client-token") String token) {
            return api.call(
                    "POST",
                    "/v1/hosts",
                    body("name", name, "underlayIp", ip, "underlayPort", port),
                    headers(token, null),
                    COLUMNS);
        }

        @Command(description = "List hosts.")
        public int list(@Mixin ApiOptions api) {
            return api.call("GET", "/v1/hosts", null, Map.of(), COLUMNS);
        }

        @Command(description = "Show a host.")
        public int get(@Mixin ApiOptions api, @Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/hosts/" + id, null, Map.of(), COLUMNS);
        }

        @Command(description = "Delete a host (refused while ENIs are placed on it).")
        public int delete(
                @Mixin ApiOptions api,
                @Parameters(paramLabel = "ID") String id,
                @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/hosts/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }

    @Command(name = "eni", mixinStandardHelpOptions = true, description = "ENIs: create, list, get, update, delete.")
    public static final class EniCommand {
        static final List<String> COLUMNS =
                List.of("id", "name", "subnetId", "hostId", "ip", "mac", "vrdma", "qosPolicyId", "securityGroupIds");

        @Mixin
        ApiOptions api;

        @Command(description = "Create an ENI; its address is allocated from the subnet unless --ip is given.")
        int create(
                @Option(names = "--subnet", required = true) String subnet,
                @Option(names = "--host", description = "place it on this host") String host,
                @Option(names = "--ip") String ip,
                @Option(names = "--vrdma", description = "enable the vRDMA device on it") boolean vrdma,
                @Option(names = "--qos", description = "QoS policy id") String qos,
                @Option(names = "--sg", split = ",", description = "security group ids") List<String> groups,
                @Option(names = "--name") String name,
                @Option(names = "--client-token") String token) {
            return api.call(
                    "POST",
                    "/v1/enis",
                    body(
                            "name",
                            name,
                            "subnetId",
                            subnet,
                            "hostId",
                            host,
                            "ip",
                            ip,
                            "vrdma",
                            vrdma,
                            "qosPolicyId",
                            qos,
                            "securityGroupIds",
                            groups),
                    headers(token, null),
                    COLUMNS);
        }

        @Command(description = "List ENIs.")
        int list(
                @Option(names = "--vpc") String vpc,
                @Option(names = "--subnet") String subnet,
                @Option(names = "--host") String host) {
            List<String> q = new ArrayList<>();
            if (vpc != null) {
                q.add("vpcId=" + vpc);
            }
            if (subnet != null) {
                q.add("subnetId=" + subnet);
            }
            if (host != null) {
                q.add("hostId=" + host);
            }
            return api.call(
                    "GET", "/v1/enis" + (q.isEmpty() ? "" : "?" + String.join("&", q)), null, Map.of(), COLUMNS);
        }

        @Command(description = "Show an ENI.")
        int get(@Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/enis/" + id, null, Map.of(), COLUMNS);
        }

        @Command(description = "Change an ENI: host, vRDMA, QoS policy ('' removes it), security groups.")
        int update(
                @Parameters(paramLabel = "ID") String id,
                @Option(names = "--host") String host,
                @Option(names = "--vrdma", arity = "1", description = "true or false") Boolean vrdma,
                @Option(names = "--qos") String qos,
                @Option(names = "--sg", split = ",") List<String> groups,
                @Option(names = "--name") String name,
                @Option(names = "--if-match") String ifMatch) {
            return api.call(
                    "PATCH",
                    "/v1/enis/" + id,
                    body("name", name, "hostId", host, "vrdma", vrdma, "qosPolicyId", qos, "securityGroupIds", groups),
                    headers(null, ifMatch),
                    COLUMNS);
        }

        @Command(description = "Delete an ENI.")
        int delete(@Parameters(paramLabel = "ID") String id, @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/enis/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }

    @Command(
            name = "sg",
            mixinStandardHelpOptions = true,
            description = "Security groups: create, list, get, delete, rule-add, rule-remove.")
    public static final class SecurityGroupCommand {
        static final List<String> COLUMNS = List.of("id", "name", "vpcId", "rules", "version");

        @Mixin
        ApiOptions api;

        @Command(description = "Create a security group in a VPC (add rules with rule-add).")
        int create(
                @Option(names = "--vpc", required = true) String vpc,
                @Option(names = "--name") String name,
                @Option(names = "--client-token") String token) {
            return api.call(
                    "POST", "/v1/security-groups", body("name", name, "vpcId", vpc), headers(token, null), COLUMNS);
        }

        @Command(description = "List security groups.")
        int list(@Option(names = "--vpc") String vpc) {
            return api.call(
                    "GET", "/v1/security-groups" + (vpc == null ? "" : "?vpcId=" + vpc), null, Map.of(), COLUMNS);
        }

        @Command(description = "Show a security group and its rules.")
        int get(@Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/security-groups/" + id, null, Map.of(), COLUMNS);
        }

        @Command(name = "rule-add", description = "Add an allow or deny rule.")
        int ruleAdd(
                @Parameters(paramLabel = "ID") String id,
                @Option(names = "--direction", defaultValue = "ingress", description = "ingress or egress")
                        String direction,
                @Option(names = "--protocol", defaultValue = "all", description = "all, tcp, udp, icmp or rdma")
                        String protocol,
                @Option(names = "--cidr", defaultValue = "0.0.0.0/0") String cidr,
                @Option(names = "--from-port") Integer from,
                @Option(names = "--to-port") Integer to,
                @Option(names = "--action", defaultValue = "allow", description = "allow or deny") String action) {
            return api.call(
                    "POST",
                    "/v1/security-groups/" + id + "/rules",
                    body(
                            "direction",
                            direction,
                            "protocol",
                            protocol,
                            "cidr",
                            cidr,
                            "fromPort",
                            from,
                            "toPort",
                            to,
                            "action",
                            action),
                    Map.of(),
                    COLUMNS);
        }

        @Command(name = "rule-remove", description = "Remove a rule by its id.")
        int ruleRemove(@Parameters(paramLabel = "ID") String id, @Parameters(paramLabel = "RULE") String rule) {
            return api.call("DELETE", "/v1/security-groups/" + id + "/rules/" + rule, null, Map.of(), COLUMNS);
        }

        @Command(description = "Delete a security group (refused while ENIs use it).")
        int delete(@Parameters(paramLabel = "ID") String id, @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/security-groups/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }

    @Command(
            name = "qos",
            mixinStandardHelpOptions = true,
            description = "QoS policies: create, list, get, update, delete.")
    public static final class QosCommand {
        static final List<String> COLUMNS = List.of("id", "name", "bandwidthMbps", "rdmaShare", "tcpShare", "version");

        @Mixin
        ApiOptions api;

        @Command(description = "Create a QoS policy: ENI bandwidth and the RDMA/TCP shares (percent).")
        int create(
                @Option(names = "--bandwidth-mbps", required = true) long mbps,
                @Option(names = "--rdma-share") Integer rdma,
                @Option(names = "--tcp-share") Integer tcp,
                @Option(names = "--name") String name,
                @Option(names = "--client-token") String token) {
            return api.call(
                    "POST",
                    "/v1/qos-policies",
                    body("name", name, "bandwidthMbps", mbps, "rdmaShare", rdma, "tcpShare", tcp),
                    headers(token, null),
                    COLUMNS);
        }

        @Command(description = "List QoS policies.")
        int list() {
            return api.call("GET", "/v1/qos-policies", null, Map.of(), COLUMNS);
        }

        @Command(description = "Show a QoS policy.")
        int get(@Parameters(paramLabel = "ID") String id) {
            return api.call("GET", "/v1/qos-policies/" + id, null, Map.of(), COLUMNS);
        }

        @Command(description = "Change a QoS policy; agents get it within a second.")
        int update(
                @Parameters(paramLabel = "ID") String id,
                @Option(names = "--bandwidth-mbps") Long mbps,
                @Option(names = "--rdma-share") Integer rdma,
                @Option(names = "--tcp-share") Integer tcp,
                @Option(names = "--name") String name,
                @Option(names = "--if-match") String ifMatch) {
            return api.call(
                    "PATCH",
                    "/v1/qos-policies/" + id,
                    body("name", name, "bandwidthMbps", mbps, "rdmaShare", rdma, "tcpShare", tcp),
                    headers(null, ifMatch),
                    COLUMNS);
        }

        @Command(description = "Delete a QoS policy (refused while ENIs use it).")
        int delete(@Parameters(paramLabel = "ID") String id, @Option(names = "--if-match") String ifMatch) {
            return api.call("DELETE", "/v1/qos-policies/" + id, null, headers(null, ifMatch), COLUMNS);
        }
    }
}
