package org.vrdma.control.service;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.vrdma.control.model.ApiException;
import org.vrdma.control.model.Eni;
import org.vrdma.control.model.Host;
import org.vrdma.control.model.Ipv4;
import org.vrdma.control.model.Ipv4.Cidr;
import org.vrdma.control.model.QosPolicy;
import org.vrdma.control.model.Requests.EniCreate;
import org.vrdma.control.model.Requests.EniUpdate;
import org.vrdma.control.model.Requests.HostCreate;
import org.vrdma.control.model.Requests.HostUpdate;
import org.vrdma.control.model.Requests.QosPolicyCreate;
import org.vrdma.control.model.Requests.QosPolicyUpdate;
import org.vrdma.control.model.Requests.RuleSpec;
import org.vrdma.control.model.Requests.SecurityGroupCreate;
import org.vrdma.control.model.Requests.SecurityGroupUpdate;
import org.vrdma.control.model.Requests.SubnetCreate;
import org.vrdma.control.model.Requests.SubnetUpdate;
import org.vrdma.control.model.Requests.VpcCreate;
import org.vrdma.control.model.Requests.VpcUpdate;
import org.vrdma.control.model.SecurityGroup;
import org.vrdma.control.model.SecurityGroupRule;
import org.vrdma.control.model.Subnet;
import org.vrdma.control.model.Vpc;
import org.vrdma.control.store.IdempotencyRecord;
import org.vrdma.control.store.ResourceStore;
import org.vrdma.control.store.StoreTransaction;
import org.vrdma.control.store.StoreView;
import org.vrdma.control.store.StoredResource;

/**
 * The resource model and its rules. Every write validates and commits inside one store
 * transaction, so two concurrent requests cannot both take the same address, VNI or CIDR; the
 * transaction is durable before the method returns. Listeners hear the new store revision after
 * every committed write.
 */
public final class ControlService {
    public static final int FIRST_VNI = 1000;
    public static final int MAX_VNI = (1 << 24) - 1;
    public static final int DEFAULT_UNDERLAY_PORT = 6081;
    public static final int MAX_SECURITY_GROUPS_PER_ENI = 5;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    private static final Pattern TOKEN = Pattern.compile("[\\x21-\\x7e]{1,128}");
    private static final Set<String> DIRECTIONS = Set.of("ingress", "egress");
    private static final Set<String> ACTIONS = Set.of(SecurityGroupRule.ALLOW, SecurityGroupRule.DENY);
    private static final Set<String> PROTOCOLS = Set.of("all", "tcp", "udp", "icmp", "rdma");

    private final ResourceStore store;
    private final SecureRandom random = new SecureRandom();
    private final List<LongConsumer> commitListeners = new CopyOnWriteArrayList<>();

    public ControlService(ResourceStore store) {
        this.store = store;
    }

    public ResourceStore store() {
        return store;
    }

    /** Called with the new store revision after each committed write. */
    public void onCommit(LongConsumer listener) {
        commitListeners.add(listener);
    }

    // ---------------------------------------------------------------- VPCs

    public Created<Vpc> createVpc(VpcCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.VPC, req, clientToken, Vpc.class, tx -> {
            String name = name(req.name());
            Cidr cidr = cidr("cidr", req.cidr());
            if (cidr.prefix() < 8 || cidr.prefix() > 28) {
                throw ApiException.invalid("cidr", "a VPC CIDR must be between /8 and /28, not /" + cidr.prefix());
            }
            Set<Integer> used = new TreeSet<>();
            for (Vpc v : all(tx, Kinds.VPC, Vpc.class)) {
                used.add(v.vni());
            }
            int vni = FIRST_VNI;
            while (used.contains(vni)) {
                vni++;
            }
            if (vni > MAX_VNI) {
                throw ApiException.conflict("vni_exhausted", "cidr", "every VNI is taken");
            }
            Vpc vpc = new Vpc(newId("vpc"), name, cidr.toString(), vni, 1);
            save(tx, Kinds.VPC, vpc.id(), vpc.version(), vpc);
            return vpc;
        });
    }

    public Vpc getVpc(String id) {
        return store.read(v -> load(v, Kinds.VPC, id, Vpc.class));
    }

    public List<Vpc> listVpcs() {
        return store.read(v -> all(v, Kinds.VPC, Vpc.class));
    }

    public Vpc updateVpc(String id, VpcUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            Vpc cur = loadForWrite(tx, Kinds.VPC, id, Vpc.class, Vpc::version, expectedVersion);
            Vpc next = new Vpc(
                    id, req.name() == null ? cur.name() : name(req.name()), cur.cidr(), cur.vni(), cur.version() + 1);
            save(tx, Kinds.VPC, id, next.version(), next);
            return next;
        });
    }

    public void deleteVpc(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.VPC, id, Vpc.class, Vpc::version, expectedVersion);
            refuseIfUsed(tx, "vpc " + id, Kinds.ENI, Eni.class, e -> e.vpcId().equals(id), Eni::id, "ENI");
            refuseIfUsed(
                    tx, "vpc " + id, Kinds.SUBNET, Subnet.class, s -> s.vpcId().equals(id), Subnet::id, "subnet");
            refuseIfUsed(
                    tx,
                    "vpc " + id,
                    Kinds.SECURITY_GROUP,
                    SecurityGroup.class,
                    g -> g.vpcId().equals(id),
                    SecurityGroup::id,
                    "security group");
            tx.delete(Kinds.VPC, id);
            return null;
        });
    }

    // ---------------------------------------------------------------- subnets

    public Created<Subnet> createSubnet(SubnetCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.SUBNET, req, clientToken, Subnet.class, tx -> {
            String name = name(req.name());
            Vpc vpc = reference(tx, "vpcId", req.vpcId(), Kinds.VPC, Vpc.class);
            Cidr cidr = cidr("cidr", req.cidr());
            Cidr vpcCidr = Cidr.parse(vpc.cidr());
            if (!vpcCidr.contains(cidr)) {
                throw new ApiException(
                        400, "cidr_outside_vpc", "cidr", cidr + " is not inside the VPC's CIDR " + vpcCidr);
            }
            if (cidr.prefix() > 29) {
                throw ApiException.invalid("cidr", "a subnet must be /29 or larger, not /" + cidr.prefix());
            }
            for (Subnet other : all(tx, Kinds.SUBNET, Subnet.class)) {
                if (other.vpcId().equals(vpc.id()) && Cidr.parse(other.cidr()).overlaps(cidr)) {
                    throw ApiException.conflict(
                            "cidr_overlap",
                            "cidr",
                            cidr + " overlaps subnet " + other.id() + " (" + other.cidr() + ") of VPC " + vpc.id());
                }
            }
            Subnet subnet =
                    new Subnet(newId("subnet"), name, vpc.id(), cidr.toString(), Ipv4.format(cidr.gateway()), 1);
            save(tx, Kinds.SUBNET, subnet.id(), 1, subnet);
            return subnet;
        });
    }

    public Subnet getSubnet(String id) {
        return store.read(v -> load(v, Kinds.SUBNET, id, Subnet.class));
    }

    public List<Subnet> listSubnets(String vpcId) {
        return store.read(v -> all(v, Kinds.SUBNET, Subnet.class).stream()
                .filter(s -> vpcId == null || s.vpcId().equals(vpcId))
                .toList());
    }

    public Subnet updateSubnet(String id, SubnetUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            Subnet cur = loadForWrite(tx, Kinds.SUBNET, id, Subnet.class, Subnet::version, expectedVersion);
            Subnet next = new Subnet(
                    id,
                    req.name() == null ? cur.name() : name(req.name()),
                    cur.vpcId(),
                    cur.cidr(),
                    cur.gatewayIp(),
                    cur.version() + 1);
            save(tx, Kinds.SUBNET, id, next.version(), next);
            return next;
        });
    }

    public void deleteSubnet(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.SUBNET, id, Subnet.class, Subnet::version, expectedVersion);
            refuseIfUsed(
                    tx, "subnet " + id, Kinds.ENI, Eni.class, e -> e.subnetId().equals(id), Eni::id, "ENI");
            tx.delete(Kinds.SUBNET, id);
            return null;
        });
    }

    // ---------------------------------------------------------------- hosts

    public Created<Host> createHost(HostCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.HOST, req, clientToken, Host.class, tx -> {
            Host host = new Host(
                    newId("host"), name(req.name()), underlayIp(req.underlayIp()), port(req.underlayPort()), 1);
            refuseDuplicateUnderlay(tx, host);
            save(tx, Kinds.HOST, host.id(), 1, host);
            return host;
        });
    }

    public Host getHost(String id) {
        return store.read(v -> load(v, Kinds.HOST, id, Host.class));
    }

    public List<Host> listHosts() {
        return store.read(v -> all(v, Kinds.HOST, Host.class));
    }

    public Host updateHost(String id, HostUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            Host cur = loadForWrite(tx, Kinds.HOST, id, Host.class, Host::version, expectedVersion);
            Host next = new Host(
                    id,
                    req.name() == null ? cur.name() : name(req.name()),
                    req.underlayIp() == null ? cur.underlayIp() : underlayIp(req.underlayIp()),
                    req.underlayPort() == null ? cur.underlayPort() : port(req.underlayPort()),
                    cur.version() + 1);
            refuseDuplicateUnderlay(tx, next);
            save(tx, Kinds.HOST, id, next.version(), next);
            return next;
        });
    }

    public void deleteHost(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.HOST, id, Host.class, Host::version, expectedVersion);
            refuseIfUsed(tx, "host " + id, Kinds.ENI, Eni.class, e -> id.equals(e.hostId()), Eni::id, "ENI");
            tx.delete(Kinds.HOST, id);
            return null;
        });
    }

    private static void refuseDuplicateUnderlay(StoreView tx, Host host) {
        for (Host other : all(tx, Kinds.HOST, Host.class)) {
            if (!other.id().equals(host.id())
                    && other.underlayIp().equals(host.underlayIp())
                    && other.underlayPort() == host.underlayPort()) {
                throw ApiException.conflict(
                        "underlay_in_use",
                        "underlayIp",
                        host.underlayIp() + ":" + host.underlayPort() + " is already host " + other.id());
            }
        }
    }

    private static String underlayIp(String ip) {
        if (ip == null) {
            throw ApiException.invalid("underlayIp", "underlayIp is required");
        }
        try {
            return Ipv4.format(Ipv4.parse(ip));
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid("underlayIp", e.getMessage());
        }
    }

    private static int port(Integer port) {
        if (port == null) {
            return DEFAULT_UNDERLAY_PORT;
        }
        if (port < 1 || port > 65535) {
            throw ApiException.invalid("underlayPort", "underlayPort must be in 1..65535, not " + port);
        }
        return port;
    }

    // ---------------------------------------------------------------- ENIs

    public Created<Eni> createEni(EniCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.ENI, req, clientToken, Eni.class, tx -> {
            String name = name(req.name());
            Subnet subnet = reference(tx, "subnetId", req.subnetId(), Kinds.SUBNET, Subnet.class);
            String hostId = optionalReference(tx, "hostId", req.hostId(), Kinds.HOST, Host.class);
            String qos = optionalReference(tx, "qosPolicyId", req.qosPolicyId(), Kinds.QOS_POLICY, QosPolicy.class);
            List<String> groups = securityGroups(tx, subnet.vpcId(), req.securityGroupIds());
            Cidr cidr = Cidr.parse(subnet.cidr());
            List<Eni> siblings = all(tx, Kinds.ENI, Eni.class).stream()
                    .filter(e -> e.subnetId().equals(subnet.id()))
                    .toList();
            String ip = req.ip() == null
                    ? allocateIp(subnet, cidr, siblings)
                    : requestedIp(subnet, cidr, siblings, req.ip());
            Eni eni = new Eni(
                    newId("eni"),
                    name,
                    subnet.vpcId(),
                    subnet.id(),
                    hostId,
                    ip,
                    newMac(tx),
                    Boolean.TRUE.equals(req.vrdma()),
                    qos,
                    groups,
                    1);
            save(tx, Kinds.ENI, eni.id(), 1, eni);
            return eni;
        });
    }

    public Eni getEni(String id) {
        return store.read(v -> load(v, Kinds.ENI, id, Eni.class));
    }

    public List<Eni> listEnis(String vpcId, String subnetId, String hostId) {
        return store.read(v -> all(v, Kinds.ENI, Eni.class).stream()
                .filter(e -> vpcId == null || e.vpcId().equals(vpcId))
                .filter(e -> subnetId == null || e.subnetId().equals(subnetId))
                .filter(e -> hostId == null || hostId.equals(e.hostId()))
                .toList());
    }

    public Eni updateEni(String id, EniUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            Eni cur = loadForWrite(tx, Kinds.ENI, id, Eni.class, Eni::version, expectedVersion);
            String hostId = req.hostId() == null
                    ? cur.hostId()
                    : optionalReference(tx, "hostId", emptyToNull(req.hostId()), Kinds.HOST, Host.class);
            String qos = req.qosPolicyId() == null
                    ? cur.qosPolicyId()
                    : optionalReference(
                            tx, "qosPolicyId", emptyToNull(req.qosPolicyId()), Kinds.QOS_POLICY, QosPolicy.class);
            List<String> groups = req.securityGroupIds() == null
                    ? cur.securityGroupIds()
                    : securityGroups(tx, cur.vpcId(), req.securityGroupIds());
            Eni next = new Eni(
                    id,
                    req.name() == null ? cur.name() : name(req.name()),
                    cur.vpcId(),
                    cur.subnetId(),
                    hostId,
                    cur.ip(),
                    cur.mac(),
                    req.vrdma() == null ? cur.vrdma() : req.vrdma(),
                    qos,
                    groups,
                    cur.version() + 1);
            save(tx, Kinds.ENI, id, next.version(), next);
            return next;
        });
    }

    public void deleteEni(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.ENI, id, Eni.class, Eni::version, expectedVersion);
            tx.delete(Kinds.ENI, id);
            return null;
        });
    }

    private static String allocateIp(Subnet subnet, Cidr cidr, List<Eni> siblings) {
        Set<Long> used = new TreeSet<>();
        for (Eni e : siblings) {
            used.add(Ipv4.parse(e.ip()));
        }
        for (long a = cidr.gateway() + 1; a < cidr.last(); a++) {
            if (!used.contains(a)) {
                return Ipv4.format(a);
            }
        }
        throw ApiException.conflict("subnet_exhausted", "subnetId", "subnet " + subnet.id() + " has no free address");
    }

    private static String requestedIp(Subnet subnet, Cidr cidr, List<Eni> siblings, String text) {
        long ip;
        try {
            ip = Ipv4.parse(text);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid("ip", e.getMessage());
        }
        if (!cidr.contains(ip)) {
            throw new ApiException(
                    400, "ip_outside_subnet", "ip", text + " is not inside subnet " + subnet.id() + " (" + cidr + ")");
        }
        if (!cidr.assignable(ip)) {
            throw new ApiException(
                    400,
                    "ip_reserved",
                    "ip",
                    text + " is reserved in " + cidr + " (network, gateway " + subnet.gatewayIp() + " or broadcast)");
        }
        String canonical = Ipv4.format(ip);
        for (Eni e : siblings) {
            if (e.ip().equals(canonical)) {
                throw ApiException.conflict("ip_in_use", "ip", canonical + " is already used by " + e.id());
            }
        }
        return canonical;
    }

    private String newMac(StoreView tx) {
        Set<String> used = new java.util.HashSet<>();
        for (Eni e : all(tx, Kinds.ENI, Eni.class)) {
            used.add(e.mac());
        }
        byte[] b = new byte[5];
        while (true) {
            random.nextBytes(b);
            // 0x02: locally administered, unicast.
            String mac = "02:" + HexFormat.ofDelimiter(":").formatHex(b);
            if (!used.contains(mac)) {
                return mac;
            }
        }
    }

    private static List<String> securityGroups(StoreView tx, String vpcId, List<String> ids) {
        if (ids == null) {
            return List.of();
        }
        Set<String> unique = new LinkedHashSet<>(ids);
        if (unique.size() > MAX_SECURITY_GROUPS_PER_ENI) {
            throw ApiException.invalid(
                    "securityGroupIds", "an ENI takes at most " + MAX_SECURITY_GROUPS_PER_ENI + " security groups");
        }
        for (String id : unique) {
            SecurityGroup g = reference(tx, "securityGroupIds", id, Kinds.SECURITY_GROUP, SecurityGroup.class);
            if (!g.vpcId().equals(vpcId)) {
                throw ApiException.invalid(
                        "securityGroupIds",
                        "security group " + id + " belongs to VPC " + g.vpcId() + ", not to " + vpcId);
            }
        }
        return List.copyOf(unique);
    }

    // ---------------------------------------------------------------- security groups

    public Created<SecurityGroup> createSecurityGroup(SecurityGroupCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.SECURITY_GROUP, req, clientToken, SecurityGroup.class, tx -> {
            String name = name(req.name());
            Vpc vpc = reference(tx, "vpcId", req.vpcId(), Kinds.VPC, Vpc.class);
            SecurityGroup g = new SecurityGroup(newId("sg"), name, vpc.id(), rules(req.rules()), 1);
            save(tx, Kinds.SECURITY_GROUP, g.id(), 1, g);
            return g;
        });
    }

    public SecurityGroup getSecurityGroup(String id) {
        return store.read(v -> load(v, Kinds.SECURITY_GROUP, id, SecurityGroup.class));
    }

    public List<SecurityGroup> listSecurityGroups(String vpcId) {
        return store.read(v -> all(v, Kinds.SECURITY_GROUP, SecurityGroup.class).stream()
                .filter(g -> vpcId == null || g.vpcId().equals(vpcId))
                .toList());
    }

    public SecurityGroup updateSecurityGroup(String id, SecurityGroupUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            SecurityGroup cur = loadForWrite(
                    tx, Kinds.SECURITY_GROUP, id, SecurityGroup.class, SecurityGroup::version, expectedVersion);
            SecurityGroup next = new SecurityGroup(
                    id,
                    req.name() == null ? cur.name() : name(req.name()),
                    cur.vpcId(),
                    req.rules() == null ? cur.rules() : rules(req.rules()),
                    cur.version() + 1);
            save(tx, Kinds.SECURITY_GROUP, id, next.version(), next);
            return next;
        });
    }

    public SecurityGroup addRule(String groupId, RuleSpec spec, Long expectedVersion) {
        require(spec, "body");
        return write(tx -> {
            SecurityGroup cur = loadForWrite(
                    tx, Kinds.SECURITY_GROUP, groupId, SecurityGroup.class, SecurityGroup::version, expectedVersion);
            List<SecurityGroupRule> rules = new ArrayList<>(cur.rules());
            rules.add(rule(spec, "rule"));
            SecurityGroup next = new SecurityGroup(groupId, cur.name(), cur.vpcId(), rules, cur.version() + 1);
            save(tx, Kinds.SECURITY_GROUP, groupId, next.version(), next);
            return next;
        });
    }

    public SecurityGroup removeRule(String groupId, String ruleId, Long expectedVersion) {
        return write(tx -> {
            SecurityGroup cur = loadForWrite(
                    tx, Kinds.SECURITY_GROUP, groupId, SecurityGroup.class, SecurityGroup::version, expectedVersion);
            List<SecurityGroupRule> rules = new ArrayList<>(cur.rules());
            if (!rules.removeIf(r -> r.id().equals(ruleId))) {
                throw new ApiException(
                        404, "not_found", "ruleId", "security group " + groupId + " has no rule " + ruleId);
            }
            SecurityGroup next = new SecurityGroup(groupId, cur.name(), cur.vpcId(), rules, cur.version() + 1);
            save(tx, Kinds.SECURITY_GROUP, groupId, next.version(), next);
            return next;
        });
    }

    public void deleteSecurityGroup(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.SECURITY_GROUP, id, SecurityGroup.class, SecurityGroup::version, expectedVersion);
            refuseIfUsed(
                    tx,
                    "security group " + id,
                    Kinds.ENI,
                    Eni.class,
                    e -> e.securityGroupIds().contains(id),
                    Eni::id,
                    "ENI");
            tx.delete(Kinds.SECURITY_GROUP, id);
            return null;
        });
    }

    private List<SecurityGroupRule> rules(List<RuleSpec> specs) {
        if (specs == null) {
            return List.of();
        }
        if (specs.size() > 100) {
            throw ApiException.invalid("rules", "a security group takes at most 100 rules");
        }
        List<SecurityGroupRule> out = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            out.add(rule(specs.get(i), "rules[" + i + "]"));
        }
        return out;
    }

    private SecurityGroupRule rule(RuleSpec spec, String path) {
        if (spec == null) {
            throw ApiException.invalid(path, "a rule may not be null");
        }
        String direction = spec.direction() == null ? "ingress" : spec.direction();
        if (!DIRECTIONS.contains(direction)) {
            throw ApiException.invalid(path + ".direction", "direction must be ingress or egress, not " + direction);
        }
        String protocol = spec.protocol() == null ? "all" : spec.protocol();
        if (!PROTOCOLS.contains(protocol)) {
            throw ApiException.invalid(
                    path + ".protocol", "protocol must be one of all, tcp, udp, icmp, rdma; not " + protocol);
        }
        String cidr = cidr(path + ".cidr", spec.cidr() == null ? "0.0.0.0/0" : spec.cidr())
                .toString();
        Integer from = spec.fromPort();
        Integer to = spec.toPort();
        boolean ported = protocol.equals("tcp") || protocol.equals("udp");
        if (!ported && (from != null || to != null)) {
            throw ApiException.invalid(path + ".fromPort", "ports apply to tcp and udp only, not to " + protocol);
        }
        if (ported) {
            if (from == null && to != null) {
                throw ApiException.invalid(path + ".fromPort", "toPort needs fromPort");
            }
            if (from != null && to == null) {
                to = from;
            }
            if (from != null && (from < 1 || from > 65535 || to < 1 || to > 65535 || from > to)) {
                throw ApiException.invalid(
                        path + ".fromPort", "the port range " + from + ".." + to + " is not within 1..65535 in order");
            }
        }
        String action = spec.action() == null ? SecurityGroupRule.ALLOW : spec.action();
        if (!ACTIONS.contains(action)) {
            throw ApiException.invalid(path + ".action", "action must be allow or deny, not " + action);
        }
        return new SecurityGroupRule(newId("sgr"), direction, protocol, cidr, from, to, action);
    }

    // ---------------------------------------------------------------- QoS policies

    public Created<QosPolicy> createQosPolicy(QosPolicyCreate req, String clientToken) {
        require(req, "body");
        return create(Kinds.QOS_POLICY, req, clientToken, QosPolicy.class, tx -> {
            if (req.bandwidthMbps() == null) {
                throw ApiException.invalid("bandwidthMbps", "bandwidthMbps is required");
            }
            int[] shares = shares(req.rdmaShare(), req.tcpShare());
            QosPolicy p = new QosPolicy(
                    newId("qos"), name(req.name()), bandwidth(req.bandwidthMbps()), shares[0], shares[1], 1);
            save(tx, Kinds.QOS_POLICY, p.id(), 1, p);
            return p;
        });
    }

    public QosPolicy getQosPolicy(String id) {
        return store.read(v -> load(v, Kinds.QOS_POLICY, id, QosPolicy.class));
    }

    public List<QosPolicy> listQosPolicies() {
        return store.read(v -> all(v, Kinds.QOS_POLICY, QosPolicy.class));
    }

    public QosPolicy updateQosPolicy(String id, QosPolicyUpdate req, Long expectedVersion) {
        require(req, "body");
        return write(tx -> {
            QosPolicy cur =
                    loadForWrite(tx, Kinds.QOS_POLICY, id, QosPolicy.class, QosPolicy::version, expectedVersion);
            int[] shares;
            if (req.rdmaShare() == null && req.tcpShare() == null) {
                shares = new int[] {cur.rdmaShare(), cur.tcpShare()};
            } else {
                shares = shares(req.rdmaShare(), req.tcpShare());
            }
            QosPolicy next = new QosPolicy(
                    id,
                    req.name() == null ? cur.name() : name(req.name()),
                    req.bandwidthMbps() == null ? cur.bandwidthMbps() : bandwidth(req.bandwidthMbps()),
                    shares[0],
                    shares[1],
                    cur.version() + 1);
            save(tx, Kinds.QOS_POLICY, id, next.version(), next);
            return next;
        });
    }

    public void deleteQosPolicy(String id, Long expectedVersion) {
        write(tx -> {
            loadForWrite(tx, Kinds.QOS_POLICY, id, QosPolicy.class, QosPolicy::version, expectedVersion);
            refuseIfUsed(tx, "QoS policy " + id, Kinds.ENI, Eni.class, e -> id.equals(e.qosPolicyId()), Eni::id, "ENI");
            tx.delete(Kinds.QOS_POLICY, id);
            return null;
        });
    }

    private static long bandwidth(long mbps) {
        if (mbps < 1 || mbps > 400_000) {
            throw ApiException.invalid("bandwidthMbps", "bandwidthMbps must be in 1..400000, not " + mbps);
        }
        return mbps;
    }

    /** Shares are percentages adding up to 100; one given alone takes the other as the rest. */
    private static int[] shares(Integer rdma, Integer tcp) {
        if (rdma == null && tcp == null) {
            return new int[] {50, 50};
        }
        int r = rdma == null ? 100 - tcp : rdma;
        int t = tcp == null ? 100 - rdma : tcp;
        if (r < 0 || r > 100) {
            throw ApiException.invalid("rdmaShare", "rdmaShare must be a percentage in 0..100, not " + r);
        }
        if (t < 0 || t > 100) {
            throw ApiException.invalid("tcpShare", "tcpShare must be a percentage in 0..100, not " + t);
        }
        if (r + t != 100) {
            throw ApiException.invalid("tcpShare", "rdmaShare + tcpShare must be 100, not " + (r + t));
        }
        return new int[] {r, t};
    }

    // ---------------------------------------------------------------- helpers

    private <T> Created<T> create(
            String kind, Object request, String clientToken, Class<T> type, Function<StoreTransaction, T> work) {
        if (clientToken != null && !TOKEN.matcher(clientToken).matches()) {
            throw ApiException.invalid("Idempotency-Key", "a client token is 1 to 128 printable ASCII characters");
        }
        return write(tx -> {
            if (clientToken == null) {
                return new Created<>(work.apply(tx), false);
            }
            String hash = sha256(kind + "\n" + Json.write(request));
            var earlier = tx.idempotencyRecord(clientToken);
            if (earlier.isPresent()) {
                IdempotencyRecord r = earlier.get();
                if (!r.kind().equals(kind) || !r.requestHash().equals(hash)) {
                    throw ApiException.conflict(
                            "idempotency_key_reused",
                            "Idempotency-Key",
                            "client token " + clientToken + " was used for another request (" + r.kind() + " "
                                    + r.resourceId() + ")");
                }
                return new Created<>(Json.read(r.response(), type), true);
            }
            T created = work.apply(tx);
            String response = Json.write(created);
            String id = Json.MAPPER.valueToTree(created).path("id").asText();
            tx.putIdempotencyRecord(new IdempotencyRecord(clientToken, kind, hash, id, response));
            return new Created<>(created, false);
        });
    }

    private <T> T write(Function<StoreTransaction, T> work) {
        long before = store.revision();
        T result = store.write(work);
        long after = store.revision();
        if (after != before) {
            for (LongConsumer l : commitListeners) {
                l.accept(after);
            }
        }
        return result;
    }

    private static <T> T load(StoreView v, String kind, String id, Class<T> type) {
        return v.get(kind, id)
                .map(r -> Json.read(r.body(), type))
                .orElseThrow(() -> ApiException.notFound(label(kind), id));
    }

    private static <T> T loadForWrite(
            StoreView v, String kind, String id, Class<T> type, Function<T, Long> version, Long expected) {
        T cur = load(v, kind, id, type);
        long actual = version.apply(cur);
        if (expected != null && expected != actual) {
            throw new ApiException(
                    412,
                    "version_mismatch",
                    "If-Match",
                    label(kind) + " " + id + " is at version " + actual + ", not " + expected
                            + "; read it again and retry");
        }
        return cur;
    }

    private static <T> T reference(StoreView v, String field, String id, String kind, Class<T> type) {
        if (id == null || id.isEmpty()) {
            throw ApiException.invalid(field, field + " is required");
        }
        return v.get(kind, id)
                .map(r -> Json.read(r.body(), type))
                .orElseThrow(
                        () -> new ApiException(404, "not_found", field, label(kind) + " " + id + " does not exist"));
    }

    private static <T> String optionalReference(StoreView v, String field, String id, String kind, Class<T> type) {
        if (id == null) {
            return null;
        }
        reference(v, field, id, kind, type);
        return id;
    }

    private static <T> void refuseIfUsed(
            StoreView v,
            String what,
            String kind,
            Class<T> type,
            Predicate<T> uses,
            Function<T, String> id,
            String noun) {
        List<String> users = all(v, kind, type).stream().filter(uses).map(id).toList();
        if (!users.isEmpty()) {
            throw ApiException.conflict(
                    "has_dependents",
                    "id",
                    what + " is still used by " + users.size() + " " + noun + (users.size() == 1 ? "" : "s") + " ("
                            + String.join(", ", users.subList(0, Math.min(5, users.size())))
                            + (users.size() > 5 ? ", ..." : "") + "); delete them first");
        }
    }

    static <T> List<T> all(StoreView v, String kind, Class<T> type) {
        List<T> out = new ArrayList<>();
        for (StoredResource r : v.list(kind)) {
            out.add(Json.read(r.body(), type));
        }
        return out;
    }

    private static void save(StoreTransaction tx, String kind, String id, long version, Object resource) {
        tx.put(kind, id, version, Json.write(resource));
    }

    private static void require(Object body, String field) {
        if (body == null) {
            throw ApiException.invalid(field, "a JSON object is required");
        }
    }

    private static String name(String name) {
        if (name == null) {
            return null;
        }
        if (!NAME.matcher(name).matches()) {
            throw ApiException.invalid(
                    "name", "a name is 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return name;
    }

    private static Cidr cidr(String field, String text) {
        if (text == null) {
            throw ApiException.invalid(field, field + " is required");
        }
        try {
            return Cidr.parse(text);
        } catch (IllegalArgumentException e) {
            throw ApiException.invalid(field, e.getMessage());
        }
    }

    private static String emptyToNull(String s) {
        return s.isEmpty() ? null : s;
    }

    private String newId(String prefix) {
        byte[] b = new byte[6];
        random.nextBytes(b);
        return prefix + "-" + HexFormat.of().formatHex(b);
    }

    static String label(String kind) {
        return switch (kind) {
            case Kinds.VPC -> "VPC";
            case Kinds.SUBNET -> "subnet";
            case Kinds.HOST -> "host";
            case Kinds.ENI -> "ENI";
            case Kinds.SECURITY_GROUP -> "security group";
            case Kinds.QOS_POLICY -> "QoS policy";
            default -> kind;
        };
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
