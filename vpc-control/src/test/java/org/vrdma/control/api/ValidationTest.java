package org.vrdma.control.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.control.client.ControlClient;
import org.vrdma.control.client.ControlClient.Response;

/** Every validation rule of the resource model, over real HTTP: status, code and field of the error. */
class ValidationTest {
    @TempDir
    static Path dir;

    static Controller controller;
    static ControlClient api;

    @BeforeAll
    static void start() throws Exception {
        controller = Controller.start(dir.resolve("data"), "127.0.0.1", 0);
        api = new ControlClient(controller.endpoint(), controller.token());
    }

    @AfterAll
    static void stop() {
        if (api != null) {
            api.close();
        }
        if (controller != null) {
            controller.close();
        }
    }

    private static String id(Response r) {
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return r.json().path("id").asText();
    }

    private static void assertError(Response r, int status, String code, String field) {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        JsonNode e = r.json().path("error");
        assertThat(e.path("code").asText()).as(r.body()).isEqualTo(code);
        if (field == null) {
            assertThat(e.path("field").isNull()).as(r.body()).isTrue();
        } else {
            assertThat(e.path("field").asText()).as(r.body()).isEqualTo(field);
        }
        assertThat(e.path("message").asText()).isNotBlank();
    }

    @Test
    void vpcCidrsAreCheckedAndVnisAreUnique() throws Exception {
        assertError(api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0")), 400, "invalid_argument", "cidr");
        assertError(api.post("/v1/vpcs", Map.of("cidr", "10.0.0.1/16")), 400, "invalid_argument", "cidr");
        assertError(api.post("/v1/vpcs", Map.of("cidr", "300.0.0.0/16")), 400, "invalid_argument", "cidr");
        assertError(api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0/30")), 400, "invalid_argument", "cidr");
        assertError(api.post("/v1/vpcs", Map.of()), 400, "invalid_argument", "cidr");
        assertError(
                api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0/16", "name", "bad name!")),
                400,
                "invalid_argument",
                "name");
        // VPCs are isolated: the same CIDR twice is allowed, with different VNIs.
        JsonNode a = api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0/16")).json();
        JsonNode b = api.post("/v1/vpcs", Map.of("cidr", "10.0.0.0/16")).json();
        assertThat(a.path("vni").asInt()).isNotEqualTo(b.path("vni").asInt());
    }

    @Test
    void subnetsStayInsideTheirVpcAndDoNotOverlap() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "172.16.0.0/16")));
        assertError(
                api.post("/v1/subnets", Map.of("vpcId", "vpc-000000000000", "cidr", "172.16.0.0/24")),
                404,
                "not_found",
                "vpcId");
        assertError(api.post("/v1/subnets", Map.of("cidr", "172.16.0.0/24")), 400, "invalid_argument", "vpcId");
        assertError(
                api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "172.17.0.0/24")),
                400,
                "cidr_outside_vpc",
                "cidr");
        assertError(
                api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "172.16.0.0/30")),
                400,
                "invalid_argument",
                "cidr");
        String s1 = id(api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "172.16.1.0/24")));
        Response overlap = api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "172.16.0.0/23"));
        assertError(overlap, 409, "cidr_overlap", "cidr");
        assertThat(overlap.json().path("error").path("message").asText()).contains(s1);
        assertThat(api.get("/v1/subnets/" + s1).json().path("gatewayIp").asText())
                .isEqualTo("172.16.1.1");
        // Another VPC may reuse the block.
        String other = id(api.post("/v1/vpcs", Map.of("cidr", "172.16.0.0/16")));
        id(api.post("/v1/subnets", Map.of("vpcId", other, "cidr", "172.16.1.0/24")));
    }

    @Test
    void eniAddressesAreAllocatedOrValidated() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.20.0.0/16")));
        String subnet = id(api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.20.0.0/29")));
        JsonNode first = api.post("/v1/enis", Map.of("subnetId", subnet)).json();
        assertThat(first.path("ip").asText()).isEqualTo("10.20.0.2");
        assertThat(first.path("mac").asText()).matches("02(:[0-9a-f]{2}){5}");
        assertThat(first.path("vrdma").asBoolean()).isFalse();

        assertError(
                api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.1.5")), 400, "ip_outside_subnet", "ip");
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.0.1")), 400, "ip_reserved", "ip");
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.0.7")), 400, "ip_reserved", "ip");
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.0.x")), 400, "invalid_argument", "ip");
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.0.2")), 409, "ip_in_use", "ip");
        assertThat(api.post("/v1/enis", Map.of("subnetId", subnet, "ip", "10.20.0.6"))
                        .json()
                        .path("ip")
                        .asText())
                .isEqualTo("10.20.0.6");
        // .3 .4 .5 remain; then the subnet is full.
        for (int i = 0; i < 3; i++) {
            id(api.post("/v1/enis", Map.of("subnetId", subnet)));
        }
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet)), 409, "subnet_exhausted", "subnetId");

        assertError(api.post("/v1/enis", Map.of("subnetId", "subnet-000000000000")), 404, "not_found", "subnetId");
        assertError(api.post("/v1/enis", Map.of("subnetId", subnet, "hostId", "host-0")), 404, "not_found", "hostId");
        assertError(
                api.post("/v1/enis", Map.of("subnetId", subnet, "qosPolicyId", "qos-0")),
                404,
                "not_found",
                "qosPolicyId");
    }

    @Test
    void eniSecurityGroupsMustExistAndBelongToTheVpc() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.30.0.0/16")));
        String otherVpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.31.0.0/16")));
        String subnet = id(api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.30.0.0/24")));
        String foreign = id(api.post("/v1/security-groups", Map.of("vpcId", otherVpc)));
        assertError(
                api.post("/v1/enis", Map.of("subnetId", subnet, "securityGroupIds", List.of(foreign))),
                400,
                "invalid_argument",
                "securityGroupIds");
        assertError(
                api.post("/v1/enis", Map.of("subnetId", subnet, "securityGroupIds", List.of("sg-nope"))),
                404,
                "not_found",
                "securityGroupIds");
    }

    @Test
    void securityGroupRulesAreValidatedFieldByField() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.40.0.0/16")));
        assertError(
                api.post(
                        "/v1/security-groups", Map.of("vpcId", vpc, "rules", List.of(Map.of("direction", "sideways")))),
                400,
                "invalid_argument",
                "rules[0].direction");
        assertError(
                api.post(
                        "/v1/security-groups",
                        Map.of("vpcId", vpc, "rules", List.of(Map.of(), Map.of("protocol", "sctp")))),
                400,
                "invalid_argument",
                "rules[1].protocol");
        assertError(
                api.post("/v1/security-groups", Map.of("vpcId", vpc, "rules", List.of(Map.of("cidr", "1.2.3.4/40")))),
                400,
                "invalid_argument",
                "rules[0].cidr");
        assertError(
                api.post(
                        "/v1/security-groups",
                        Map.of(
                                "vpcId",
                                vpc,
                                "rules",
                                List.of(Map.of("protocol", "tcp", "fromPort", 90, "toPort", 80)))),
                400,
                "invalid_argument",
                "rules[0].fromPort");
        assertError(
                api.post(
                        "/v1/security-groups",
                        Map.of("vpcId", vpc, "rules", List.of(Map.of("protocol", "rdma", "fromPort", 4791)))),
                400,
                "invalid_argument",
                "rules[0].fromPort");
        JsonNode g = api.post(
                        "/v1/security-groups",
                        Map.of("vpcId", vpc, "rules", List.of(Map.of("protocol", "tcp", "fromPort", 22))))
                .json();
        JsonNode rule = g.path("rules").get(0);
        assertThat(rule.path("toPort").asInt()).isEqualTo(22);
        assertThat(rule.path("cidr").asText()).isEqualTo("0.0.0.0/0");
        assertThat(rule.path("direction").asText()).isEqualTo("ingress");
        assertError(
                api.delete("/v1/security-groups/" + g.path("id").asText() + "/rules/sgr-none"),
                404,
                "not_found",
                "ruleId");
    }

    @Test
    void qosSharesAddUpToOneHundred() throws Exception {
        assertError(api.post("/v1/qos-policies", Map.of()), 400, "invalid_argument", "bandwidthMbps");
        assertError(api.post("/v1/qos-policies", Map.of("bandwidthMbps", 0)), 400, "invalid_argument", "bandwidthMbps");
        assertError(
                api.post("/v1/qos-policies", Map.of("bandwidthMbps", 100, "rdmaShare", 70, "tcpShare", 70)),
                400,
                "invalid_argument",
                "tcpShare");
        assertError(
                api.post("/v1/qos-policies", Map.of("bandwidthMbps", 100, "rdmaShare", 101)),
                400,
                "invalid_argument",
                "rdmaShare");
        JsonNode p = api.post("/v1/qos-policies", Map.of("bandwidthMbps", 25000, "rdmaShare", 80))
                .json();
        assertThat(p.path("tcpShare").asInt()).isEqualTo(20);
    }

    @Test
    void hostsNeedAValidUniqueUnderlayAddress() throws Exception {
        assertError(api.post("/v1/hosts", Map.of("underlayIp", "localhost")), 400, "invalid_argument", "underlayIp");
        assertError(
                api.post("/v1/hosts", Map.of("underlayIp", "127.0.0.1", "underlayPort", 70000)),
                400,
                "invalid_argument",
                "underlayPort");
        JsonNode h = api.post("/v1/hosts", Map.of("underlayIp", "127.0.0.9")).json();
        assertThat(h.path("underlayPort").asInt()).isEqualTo(6081);
        assertError(api.post("/v1/hosts", Map.of("underlayIp", "127.0.0.9")), 409, "underlay_in_use", "underlayIp");
    }

    @Test
    void resourcesInUseCannotBeDeleted() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.50.0.0/16")));
        String subnet = id(api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.50.0.0/24")));
        String host = id(api.post("/v1/hosts", Map.of("underlayIp", "127.0.0.50")));
        String sg = id(api.post("/v1/security-groups", Map.of("vpcId", vpc)));
        String qos = id(api.post("/v1/qos-policies", Map.of("bandwidthMbps", 1000)));
        String eni = id(api.post(
                "/v1/enis",
                Map.of("subnetId", subnet, "hostId", host, "securityGroupIds", List.of(sg), "qosPolicyId", qos)));

        Response vpcDelete = api.delete("/v1/vpcs/" + vpc);
        assertError(vpcDelete, 409, "has_dependents", "id");
        assertThat(vpcDelete.json().path("error").path("message").asText()).contains(eni);
        assertError(api.delete("/v1/subnets/" + subnet), 409, "has_dependents", "id");
        assertError(api.delete("/v1/hosts/" + host), 409, "has_dependents", "id");
        assertError(api.delete("/v1/security-groups/" + sg), 409, "has_dependents", "id");
        assertError(api.delete("/v1/qos-policies/" + qos), 409, "has_dependents", "id");

        // Detaching the policy and the groups frees them.
        assertThat(api.patch("/v1/enis/" + eni, Map.of("qosPolicyId", "", "securityGroupIds", List.of()))
                        .status())
                .isEqualTo(200);
        assertThat(api.delete("/v1/qos-policies/" + qos).status()).isEqualTo(204);
        assertThat(api.delete("/v1/security-groups/" + sg).status()).isEqualTo(204);
        assertThat(api.delete("/v1/enis/" + eni).status()).isEqualTo(204);
        assertThat(api.delete("/v1/hosts/" + host).status()).isEqualTo(204);
        assertError(api.delete("/v1/vpcs/" + vpc), 409, "has_dependents", "id"); // the subnet
        assertThat(api.delete("/v1/subnets/" + subnet).status()).isEqualTo(204);
        assertThat(api.delete("/v1/vpcs/" + vpc).status()).isEqualTo(204);
    }

    @Test
    void updatesValidateLikeCreates() throws Exception {
        String vpc = id(api.post("/v1/vpcs", Map.of("cidr", "10.60.0.0/16")));
        String subnet = id(api.post("/v1/subnets", Map.of("vpcId", vpc, "cidr", "10.60.0.0/24")));
        String eni = id(api.post("/v1/enis", Map.of("subnetId", subnet)));
        assertError(api.patch("/v1/enis/" + eni, Map.of("hostId", "host-missing")), 404, "not_found", "hostId");
        assertError(api.patch("/v1/enis/" + eni, Map.of("ip", "10.60.0.9")), 400, "invalid_argument", "ip");
        assertError(api.patch("/v1/vpcs/" + vpc, Map.of("cidr", "10.61.0.0/16")), 400, "invalid_argument", "cidr");
        assertError(api.patch("/v1/enis/eni-missing", Map.of("vrdma", true)), 404, "not_found", "id");
    }
}
