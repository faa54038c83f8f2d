package org.vrdma.harness.backend;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LinkSpec;
import org.vrdma.verbs.IbvContext;
import org.vrdma.verbs.VerbsHost;

/**
 * A lab brought up on one backend: its hosts, each with its ENI, and transfers between them.
 * {@link #close()} tears everything down (also from a shutdown hook, should the JVM exit first);
 * afterwards {@link #leftovers()} is empty.
 *
 * <p>Every transfer starts a server run on the receiving host and a client run on the sending
 * host, each a vSwitch with the host's ENI on ports of its own, so transfers between any hosts may
 * run at the same time.
 */
public final class RunningLab implements AutoCloseable {
    /** Prefix of every lab id, and so of every namespace, container and network a lab creates. */
    public static final String PREFIX_PROPERTY = "vrdma.lab.prefix";

    private static final AtomicInteger LABS = new AtomicInteger();

    private final String id;
    private final LabPlan plan;
    private final HostBackend backend;
    private final HostBackend.Hosts environments;
    private final Map<String, LabHost> hosts = new LinkedHashMap<>();
    private final AtomicInteger transfers = new AtomicInteger();
    private final Thread shutdownHook;
    /** In-process verbs hosts and their contexts, by lab host name (embedded backend, on first use). */
    private final Map<String, VerbsHost> verbsHosts = new LinkedHashMap<>();

    private final Map<String, IbvContext> contexts = new LinkedHashMap<>();
    private boolean closed;

    private RunningLab(String id, LabPlan plan, HostBackend backend, HostBackend.Hosts environments) {
        this.id = id;
        this.plan = plan;
        this.backend = backend;
        this.environments = environments;
        List<HostEnvironment> envs = environments.environments();
        for (int i = 0; i < plan.hosts().size(); i++) {
            LabPlan.HostPlan h = plan.hosts().get(i);
            hosts.put(h.name(), new LabHost(h.name(), h.eniIpv4(), plan.vni(), envs.get(i)));
        }
        shutdownHook = new Thread(this::closeQuietly, id + "-teardown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Brings {@code plan} up on the backend named {@code backendName} ({@link HostBackend#byName}). */
    public static RunningLab start(String backendName, LabPlan plan) throws Exception {
        return start(HostBackend.byName(backendName), plan);
    }

    public static RunningLab start(HostBackend backend, LabPlan plan) throws Exception {
        String id = idPrefix() + "-" + ProcessHandle.current().pid() + "-" + LABS.incrementAndGet();
        HostBackend.Hosts envs = backend.open(id, plan.hostNames());
        try {
            return new RunningLab(id, plan, backend, envs);
        } catch (RuntimeException e) {
            envs.close();
            throw e;
        }
    }

    /** The prefix of lab ids: {@code -Dvrdma.lab.prefix}, default {@code vrdma-lab}. */
    public static String idPrefix() {
        String p = System.getProperty(PREFIX_PROPERTY, "vrdma-lab").toLowerCase(Locale.ROOT);
        if (!p.matches("[a-z][a-z0-9-]{0,23}")) {
            throw new IllegalArgumentException(PREFIX_PROPERTY + " must be lower-case letters, digits and '-': " + p);
        }
        return p;
    }

    /** The lab's id: prefix, this process's pid, a counter; every name the lab creates starts with it. */
    public String id() {
        return id;
    }

    public String backend() {
        return backend.name();
    }

    public LabPlan plan() {
        return plan;
    }

    public List<LabHost> hosts() {
        return List.copyOf(hosts.values());
    }

    /** The host called {@code name}; throws with the lab's host names otherwise. */
    public LabHost host(String name) {
        LabHost h = hosts.get(name);
        if (h == null) {
            throw new IllegalArgumentException(
                    "no host " + name + " in lab " + plan.name() + " (hosts: " + hosts.keySet() + ")");
        }
        return h;
    }

    /** One transfer from {@code from} to {@code to}; waits for it. */
    public Transfer transfer(LabHost from, LabHost to, TransferOptions options) throws Exception {
        return transfers(List.of(new TransferRequest(from, to, options))).getFirst();
    }

    /** What one of {@link #transfers} moves. */
    public record TransferRequest(LabHost from, LabHost to, TransferOptions options) {}

    /** Runs the transfers at the same time and waits for all of them. */
    public List<Transfer> transfers(List<TransferRequest> requests) throws Exception {
        List<Running> running = new ArrayList<>();
        try {
            for (TransferRequest r : requests) {
                running.add(startTransfer(r));
            }
            List<Transfer> done = new ArrayList<>();
            for (Running r : running) {
                TransferOptions o = r.request.options();
                failFastOnServerError(r, o.timeout().plus(Duration.ofSeconds(90)));
                int clientExit = r.client.await(o.timeout().plus(Duration.ofSeconds(90)));
                int serverExit = r.server.await(Duration.ofSeconds(30));
                done.add(new Transfer(
                        r.request.from(),
                        r.request.to(),
                        o,
                        clientExit,
                        serverExit,
                        r.client.output(),
                        r.server.output()));
            }
            return done;
        } finally {
            for (Running r : running) {
                r.client.kill();
                r.server.kill();
            }
        }
    }

    private record Running(TransferRequest request, HostRun server, HostRun client) {}

    /**
     * A server that ended with an error (bad options, address in use) fails the transfer within
     * seconds, not after the client's connect timeout: the client gets 5 s more, then is killed.
     */
    private static void failFastOnServerError(Running r, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!r.client.finished() && System.nanoTime() - deadline < 0) {
            if (r.server.finished() && r.server.await(Duration.ZERO) != 0) {
                r.client.await(Duration.ofSeconds(5));
                return;
            }
            Thread.sleep(50);
        }
    }

    private Running startTransfer(TransferRequest r) throws Exception {
        if (r.from().equals(r.to())) {
            throw new IllegalArgumentException(
                    "a transfer needs two hosts, not " + r.from().name() + " twice");
        }
        requireOwn(r.from());
        requireOwn(r.to());
        TransferOptions o = r.options();
        int k = transfers.incrementAndGet();
        HostEnvironment src = r.from().environment();
        HostEnvironment dst = r.to().environment();
        int serverPort = dst.allocatePort();
        int oobPort = dst.allocatePort();
        int clientPort = src.allocatePort();
        String serverUnderlay = dst.underlayIp() + ":" + serverPort;
        String clientUnderlay = src.underlayIp() + ":" + clientPort;
        long timeoutS = Math.max(1, o.timeout().toSeconds());
        List<String> common = List.of(
                "--vni", String.valueOf(plan.vni()),
                "--oob-port", String.valueOf(oobPort),
                "--loss", String.valueOf(o.lossRate()),
                "--connect-timeout", "60",
                "--test-timeout", String.valueOf(timeoutS));
        List<String> server = new ArrayList<>(List.of(
                "host",
                "--server",
                "--underlay",
                serverUnderlay,
                "--eni-ip",
                r.to().eniIpv4(),
                "--peer-eni-ip",
                r.from().eniIpv4(),
                "--peer-underlay",
                clientUnderlay,
                // The server takes the test from the client's HELLO but checks its own options too.
                "--size",
                String.valueOf(o.sizeBytes()),
                "--buffer",
                String.valueOf(o.bufferBytes())));
        server.addAll(common);
        List<String> client = new ArrayList<>(List.of(
                "host", "--client",
                "--underlay", clientUnderlay,
                "--eni-ip", r.from().eniIpv4(),
                "--peer-eni-ip", r.to().eniIpv4(),
                "--peer-underlay", serverUnderlay,
                "--test", o.test(),
                "--size", String.valueOf(o.sizeBytes()),
                "--iterations", String.valueOf(o.iterations()),
                "--buffer", String.valueOf(o.bufferBytes()),
                "--seed", String.valueOf(o.seed())));
        if (o.verify()) {
            client.add("--verify");
        }
        client.addAll(common);
        hostLinkArgs(r.from(), client);
        hostLinkArgs(r.to(), server);
        HostRun serverRun = dst.start("t" + k + "-server", server);
        HostRun clientRun;
        try {
            clientRun = src.start("t" + k + "-client", client);
        } catch (Exception e) {
            serverRun.kill();
            throw e;
        }
        return new Running(r, serverRun, clientRun);
    }

    /** The host's link to its switch, emulated on the run's vSwitch uplink (when the plan has one). */
    private void hostLinkArgs(LabHost h, List<String> args) {
        String json = hostLinkJson(h.name());
        if (json != null) {
            args.addAll(List.of("--host-link", json, "--link-seed", String.valueOf(plan.linkSeed())));
        }
    }

    /** The link of host {@code name} to its switch as JSON ({@code --host-link}), or null for none. */
    String hostLinkJson(String name) {
        LinkSpec link = hostPlan(host(name)).hostLink();
        if (link == null) {
            return null;
        }
        try {
            return LabLoader.json().writeValueAsString(link);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write the link of host " + name, e);
        }
    }

    private LabPlan.HostPlan hostPlan(LabHost h) {
        for (LabPlan.HostPlan p : plan.hosts()) {
            if (p.name().equals(h.name())) {
                return p;
            }
        }
        throw new IllegalArgumentException("host " + h.name() + " is not in the plan of lab " + id);
    }

    private void requireOwn(LabHost h) {
        if (hosts.get(h.name()) != h) {
            throw new IllegalArgumentException("host " + h.name() + " is not a host of lab " + id);
        }
    }

    /**
     * The Java verbs context ({@code ibv_context}) of {@code h}'s ENI, for an application in this
     * JVM: on the embedded backend every host of the lab gets a {@link VerbsHost} on 127.0.0.1 (its
     * ENI address, the lab's VNI, routes to every other host) the first time a context is asked
     * for; contexts and hosts close with the lab. QPs of two hosts connect with {@link
     * org.vrdma.verbs.QpInfo} and {@link org.vrdma.verbs.QpConnector#rcToRts}.
     *
     * @throws UnsupportedOperationException on netns and docker: there the host's vNIC runs in a
     *     process inside the namespace or container, and a verbs context is an object of the JVM
     *     that runs it; run verbs code there as a flow workload ({@code LabRun.run}), as transfers,
     *     or as a C program on the native shim ({@code ./vrdma host --verbs-socket})
     */
    public synchronized IbvContext verbsContext(LabHost h) {
        requireOwn(h);
        if (closed) {
            throw new IllegalStateException("lab " + id + " is closed");
        }
        if (!backend.name().equals("embedded")) {
            throw new UnsupportedOperationException("verbs contexts are injected on the embedded backend only: on "
                    + backend.name() + " the ENI's vNIC runs in a host process inside its "
                    + (backend.name().equals("docker") ? "container" : "network namespace")
                    + ", and a verbs context is an in-process object of that JVM; use transfers or flow workloads"
                    + " (LabRun.run), or C verbs programs on the native shim (./vrdma host --verbs-socket)");
        }
        if (verbsHosts.isEmpty()) {
            for (LabHost host : hosts.values()) {
                VerbsHost.Options o = VerbsHost.Options.loopback(id + "-" + host.name(), host.eniIpv4());
                verbsHosts.put(
                        host.name(),
                        VerbsHost.start(new VerbsHost.Options(
                                o.name(), o.bindIpv4(), 0, host.eniIpv4(), plan.vni(), o.transport())));
            }
            for (LabHost a : hosts.values()) {
                for (LabHost b : hosts.values()) {
                    if (a != b) {
                        verbsHosts
                                .get(a.name())
                                .addPeer(b.eniIpv4(), verbsHosts.get(b.name()).underlayAddress());
                    }
                }
            }
        }
        return contexts.computeIfAbsent(
                h.name(), n -> verbsHosts.get(n).device().open());
    }

    /** The in-process {@link VerbsHost} behind {@link #verbsContext} (embedded backend). */
    public synchronized VerbsHost verbsHost(LabHost h) {
        verbsContext(h);
        return verbsHosts.get(h.name());
    }

    /**
     * What of this lab still exists: namespaces, containers, networks, images, threads and host
     * processes named after it. Empty once the lab has closed.
     */
    public List<String> leftovers() throws Exception {
        List<String> found = new ArrayList<>(backend.leftovers(id));
        found.addAll(LabProcesses.withLabPrefix(id));
        return found;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (VerbsHost h : verbsHosts.values()) {
                try {
                    h.close(); // closes the contexts and whatever the test left open
                } catch (RuntimeException e) {
                    System.err.println("vrdma lab " + id + ": closing verbs host failed: " + e.getMessage());
                }
            }
            verbsHosts.clear();
            contexts.clear();
            environments.close();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException shuttingDown) {
                // called from the hook itself
            }
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            System.err.println("vrdma lab " + id + ": teardown failed: " + e.getMessage());
        }
    }
}
