package org.vrdma.harness.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabRun;

/**
 * The network-namespace backend: one namespace per host, each with a veth link to a bridge in
 * the lab's own namespace, as hosts cabled to one switch; jumbo frames (MTU 9000) so a 4096-byte
 * RoCE MTU fits one Geneve datagram. Host runs start as child JVMs under {@code ip netns exec}.
 * Needs root and iproute2. Nothing appears in the namespace that runs the lab: the veth ends are
 * created straight inside the lab's namespaces, and {@link Hosts#close()} kills every process in
 * them and deletes them.
 *
 * <p>Names: the bridge namespace is the lab id, host {@code h}'s namespace is {@code <lab id>-h};
 * the underlay is 192.168.216.0/24, host {@code i} (from 0) at {@code .i+1}.
 */
public final class NetnsBackend implements HostBackend, LabBackend {
    private static final String SUBNET = "192.168.216.";
    private static final int FIRST_PORT = 6081;

    @Override
    public String name() {
        return "netns";
    }

    @Override
    public String description() {
        return "real time, one network namespace per host on a bridge, a host process in each (root)";
    }

    @Override
    public String unavailableReason() {
        try {
            requireRoot();
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    /** Brings a lab definition up here: one ENI per host, one VPC, perftest workloads. */
    @Override
    public LabRun start(Lab lab) {
        return RealTimeLabRun.start(this, lab);
    }

    @Override
    public Hosts open(String labId, List<String> hostNames) throws Exception {
        requireRoot();
        if (hostNames.size() > 250) {
            throw new IllegalArgumentException("the netns backend takes at most 250 hosts");
        }
        LabHosts lab = new LabHosts(labId, Files.createTempDirectory(labId));
        try {
            lab.create(hostNames);
            return lab;
        } catch (Exception e) {
            lab.close();
            throw e;
        }
    }

    @Override
    public List<String> leftovers(String prefix) throws IOException {
        List<String> found = new ArrayList<>();
        for (String ns : namespaces()) {
            if (ns.startsWith(prefix)) {
                found.add("network namespace " + ns);
            }
        }
        return found;
    }

    private static List<String> namespaces() throws IOException {
        List<String> names = new ArrayList<>();
        for (String line : Commands.run("ip", "netns", "list").split("\n")) {
            if (!line.isBlank()) {
                names.add(line.strip().split(" ")[0]);
            }
        }
        return names;
    }

    private static void requireRoot() throws IOException {
        String uid = Commands.run("id", "-u").strip();
        if (!uid.equals("0")) {
            throw new IllegalStateException("the netns backend needs root (uid is " + uid + ")");
        }
        try {
            Commands.run("ip", "-V");
        } catch (IOException e) {
            throw new IllegalStateException("the netns backend needs iproute2's `ip`", e);
        }
    }

    private static final class LabHosts implements Hosts {
        private final String labId;
        private final Path dir;
        private final List<String> created = new ArrayList<>();
        private final List<HostEnvironment> envs = new ArrayList<>();
        private final List<ProcessRun> runs = new CopyOnWriteArrayList<>();

        LabHosts(String labId, Path dir) {
            this.labId = labId;
            this.dir = dir;
        }

        void create(List<String> hostNames) throws IOException {
            String bridgeNs = labId;
            addNamespace(bridgeNs);
            Commands.run(Commands.ip("-n", bridgeNs, "link", "add", "br0", "type", "bridge"));
            for (int i = 0; i < hostNames.size(); i++) {
                String ns = labId + "-" + hostNames.get(i);
                addNamespace(ns);
                String port = "p" + i;
                Commands.run(Commands.ip(
                        "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", bridgeNs));
                Commands.run(Commands.ip("-n", bridgeNs, "link", "set", port, "mtu", "9000", "master", "br0", "up"));
                String ip = SUBNET + (i + 1);
                Commands.run(Commands.ip("-n", ns, "addr", "add", ip + "/24", "dev", "eth0"));
                Commands.run(Commands.ip("-n", ns, "link", "set", "eth0", "mtu", "9000", "up"));
                Commands.run(Commands.ip("-n", ns, "link", "set", "lo", "up"));
                envs.add(new Environment(hostNames.get(i), ns, ip, this));
            }
            Commands.run(Commands.ip("-n", bridgeNs, "link", "set", "br0", "up"));
        }

        private void addNamespace(String ns) throws IOException {
            Commands.run("ip", "netns", "add", ns);
            created.add(ns);
        }

        @Override
        public List<HostEnvironment> environments() {
            return envs;
        }

        @Override
        public void close() {
            List<String> failures = new ArrayList<>();
            for (ProcessRun r : runs) {
                r.kill();
            }
            for (String ns : created.reversed()) {
                try {
                    // Anything still running inside (a run's children) would keep nothing alive
                    // once the namespace is gone, but it would leak: end it first.
                    for (String pid : Commands.run("ip", "netns", "pids", ns).split("\\s+")) {
                        if (!pid.isBlank()) {
                            Commands.run("kill", "-9", pid.strip());
                        }
                    }
                } catch (IOException e) {
                    failures.add(e.getMessage());
                }
                try {
                    // Deleting a namespace deletes the veth end inside it, and with it the pair.
                    Commands.run("ip", "netns", "delete", ns);
                } catch (IOException e) {
                    failures.add(e.getMessage());
                }
            }
            created.clear();
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                failures.add("cannot delete " + dir + ": " + e.getMessage());
            }
            if (!failures.isEmpty()) {
                throw new IllegalStateException("netns lab " + labId + " teardown: " + String.join("; ", failures));
            }
        }
    }

    private record Environment(
            String hostName, String namespace, String underlayIp, LabHosts lab, AtomicInteger nextPort)
            implements HostEnvironment {
        Environment(String hostName, String namespace, String underlayIp, LabHosts lab) {
            this(hostName, namespace, underlayIp, lab, new AtomicInteger(FIRST_PORT));
        }

        @Override
        public int allocatePort() {
            // The namespace's network stack is the lab's alone: counting up is enough.
            return nextPort.getAndIncrement();
        }

        @Override
        public HostRun start(String runName, List<String> vrdmaArgs) throws IOException {
            ProcessRun run = ProcessRun.start(
                    VrdmaJava.command(List.of("ip", "netns", "exec", namespace), lab.labId, vrdmaArgs),
                    lab.dir,
                    hostName + "-" + runName);
            lab.runs.add(run);
            return run;
        }
    }
}
