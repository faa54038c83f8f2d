package org.vrdma.control.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.vrdma.control.agent.DataPlaneProgrammer;
import org.vrdma.control.agent.HostAgent;
import org.vrdma.control.agent.HostDesiredState;
import org.vrdma.control.agent.InMemoryProgrammer;
import org.vrdma.control.agent.vswitch.QueueAttachments;
import org.vrdma.control.agent.vswitch.VSwitchProgrammer;
import org.vrdma.control.api.Controller;
import org.vrdma.control.client.ControlClient;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.udp.VSwitchHost;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A controller plus N hosts in this process, and a VPC with one vRDMA ENI per host, all made through
 * the REST API with client tokens (so running it again on the same data directory reuses them).
 * Each host is a real vSwitch ({@link VSwitchHost}, UDP on 127.0.0.1) programmed by its agent
 * through a {@link VSwitchProgrammer}; {@code --data-plane memory} keeps the in-memory programmers
 * instead (no sockets besides the API).
 */
@Command(
        name = "up",
        mixinStandardHelpOptions = true,
        description =
                "Start a controller and N hosts (vSwitch + agent) locally, with a VPC and one vRDMA ENI per host.")
public final class UpCommand implements java.util.concurrent.Callable<Integer> {
    private static final Duration READY = Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    @Option(names = "--hosts", defaultValue = "2", description = "hosts to start (default: ${DEFAULT-VALUE})")
    int hosts;

    @Option(names = "--data-dir", description = "where the store and the token live (default: ~/.vrdma/control)")
    Path dataDir;

    @Option(
            names = "--port",
            defaultValue = "7480",
            description = "API port, 0 for any free one (default: ${DEFAULT-VALUE})")
    int port;

    @Option(
            names = "--underlay-port",
            defaultValue = "0",
            description = "UDP port of the first host's vSwitch, the next hosts take the ports after it;"
                    + " 0 (default) for ephemeral ports")
    int underlayPort;

    @Option(
            names = "--data-plane",
            defaultValue = "vswitch",
            description = "vswitch (real vSwitches over UDP, default) or memory (in-memory programmers)")
    String dataPlane;

    @Option(
            names = "--busy-poll-us",
            defaultValue = "100",
            description = "Microseconds each vSwitch event loop keeps polling its sockets after its last event"
                    + " before it sleeps; a loop that loses its core while polling sleeps instead for a while"
                    + " (0: sleep at once); default ${DEFAULT-VALUE}")
    long busyPollUs;

    @Option(names = "--run-seconds", hidden = true, description = "stop after this many seconds (tests, demos)")
    Long runSeconds;

    @Override
    public Integer call() throws Exception {
        if (hosts < 1 || hosts > 64) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--hosts must be in 1..64");
        }
        if (!dataPlane.equals("vswitch") && !dataPlane.equals("memory")) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--data-plane must be vswitch or memory, not " + dataPlane);
        }
        if (busyPollUs < 0 || busyPollUs > 1_000_000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--busy-poll-us must be 0..1000000");
        }
        if (port < 0 || port > 0xFFFF) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--port must be 0..65535");
        }
        if (underlayPort < 0 || underlayPort + hosts - 1 > 65535) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--underlay-port out of range");
        }
        boolean real = dataPlane.equals("vswitch");
        Path dir = dataDir != null ? dataDir : ApiOptions.defaultDataDir();
        var out = spec.commandLine().getOut();
        List<AutoCloseable> resources = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            for (AutoCloseable c : resources.reversed()) {
                try {
                    c.close();
                } catch (Exception e) {
                    // closing the rest matters more
                }
            }
            stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        boolean hookRan = false;
        try {
            List<VSwitchHost> switches = new ArrayList<>();
            if (real) {
                NettyRuntime runtime = NettyRuntime.best();
                EventLoopGroup group = runtime.newEventLoopGroup(Math.min(hosts, 2), "vrdma-up", busyPollUs * 1000);
                resources.add(
                        () -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
                for (int i = 0; i < hosts; i++) {
                    var options = VSwitchHost.Options.loopback("host-" + i);
                    if (underlayPort != 0) {
                        options = new VSwitchHost.Options(
                                "127.0.0.1", underlayPort + i, options.config(), options.gso(), options.gro());
                    }
                    VSwitchHost h = VSwitchHost.start(group, runtime, options);
                    resources.add(h);
                    switches.add(h);
                }
            }
            Controller controller;
            try {
                controller = Controller.start(dir, "127.0.0.1", port);
            } catch (java.io.IOException e) {
                spec.commandLine().getErr().println("vrdma up: " + e.getMessage());
                return 1;
            }
            resources.add(controller);
            Files.writeString(dir.resolve(ControllerCommand.ENDPOINT_FILE), controller.endpoint() + "\n");
            List<HostAgent> agents = new ArrayList<>();
            List<DataPlaneProgrammer> programmers = new ArrayList<>();
            try (ControlClient api = new ControlClient(controller.endpoint(), controller.token())) {
                String vpc = create(api, "/v1/vpcs", "up-vpc", Map.of("name", "up", "cidr", "10.0.0.0/16"));
                String subnet = create(
                        api, "/v1/subnets", "up-subnet", Map.of("name", "up", "vpcId", vpc, "cidr", "10.0.0.0/24"));
                out.println("VPC " + vpc + ", subnet " + subnet);
                List<String> eniIps = new ArrayList<>();
                for (int i = 0; i < hosts; i++) {
                    long underlay = real
                            ? switches.get(i).underlayAddress()
                            : UnderlayAddress.of(
                                    UnderlayAddress.parseIpv4("127.0.0.1"),
                                    (underlayPort == 0 ? 16081 : underlayPort) + i);
                    String host = host(api, i, underlay);
                    JsonNode eni = createJson(
                            api,
                            "/v1/enis",
                            "up-eni-" + i,
                            Map.of("name", "eni-" + i, "subnetId", subnet, "hostId", host, "vrdma", true));
                    DataPlaneProgrammer p = real
                            ? new VSwitchProgrammer(switches.get(i), new QueueAttachments())
                            : new InMemoryProgrammer();
                    programmers.add(p);
                    HostAgent agent = new HostAgent(controller.endpoint(), controller.token(), host, p);
                    agents.add(agent);
                    resources.add(agent);
                    eniIps.add(eni.path("ip").asText());
                    out.println("host " + host + " (agent started) underlay " + UnderlayAddress.toString(underlay)
                            + " with vRDMA ENI " + eni.path("id").asText() + " "
                            + eni.path("ip").asText()
                            + " mac " + eni.path("mac").asText());
                }
            }
            out.println("controller listening on " + controller.endpoint());
            out.println("token file: " + controller.tokenFile());
            out.flush();
            awaitProgrammed(controller, agents, programmers, out);
            out.println("try: vrdma eni list --data-dir " + dir);
            out.println(real ? "data plane: vSwitches over UDP on 127.0.0.1; Ctrl-C stops" : "data plane: in memory");
            out.flush();
            if (runSeconds != null) {
                stopped.await(runSeconds, TimeUnit.SECONDS);
            } else {
                stopped.await();
                hookRan = true;
            }
        } finally {
            if (!hookRan) {
                Runtime.getRuntime().removeShutdownHook(hook);
                hook.run();
            }
        }
        return 0;
    }

    /** Waits until every host's data plane is at the controller's state, and says what it holds. */
    private static void awaitProgrammed(
            Controller controller,
            List<HostAgent> agents,
            List<DataPlaneProgrammer> programmers,
            java.io.PrintWriter out)
            throws InterruptedException {
        long t0 = System.nanoTime();
        for (int i = 0; i < agents.size(); i++) {
            HostAgent a = agents.get(i);
            long deadline = System.nanoTime() + READY.toNanos();
            HostDesiredState want;
            while ((want = controller.publisher().state(a.hostId())) == null || a.version() < want.version()) {
                if (System.nanoTime() > deadline) {
                    out.println("host " + a.hostId() + " not programmed yet: " + a.lastError());
                    break;
                }
                Thread.sleep(5);
            }
            HostDesiredState s = a.state();
            String where = programmers.get(i) instanceof VSwitchProgrammer v
                    ? " on vSwitch " + UnderlayAddress.toString(v.host().underlayAddress())
                    : "";
            out.printf(
                    "host %s programmed%s: %d ENI(s), %d route(s)%n",
                    a.hostId(),
                    where,
                    s == null ? 0 : s.enis().size(),
                    s == null ? 0 : s.routes().size());
        }
        out.printf("all hosts programmed in %.0f ms%n", (System.nanoTime() - t0) / 1e6);
    }

    /**
     * The host record {@code host-i}, made or updated to {@code underlay} (ephemeral ports change
     * from one run to the next).
     */
    private static String host(ControlClient api, int i, long underlay) throws Exception {
        String name = "host-" + i;
        String ip = UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(underlay));
        int p = UnderlayAddress.port(underlay);
        ControlClient.Response list = api.get("/v1/hosts");
        if (!list.ok()) {
            throw new IllegalStateException("/v1/hosts: " + list.errorText());
        }
        for (JsonNode h : list.json().path("items")) {
            if (name.equals(h.path("name").asText())) {
                if (!ip.equals(h.path("underlayIp").asText())
                        || p != h.path("underlayPort").asInt()) {
                    String id = h.path("id").asText();
                    ControlClient.Response r =
                            api.patch("/v1/hosts/" + id, Map.of("underlayIp", ip, "underlayPort", p));
                    if (!r.ok()) {
                        throw new IllegalStateException("/v1/hosts/" + id + ": " + r.errorText());
                    }
                }
                return h.path("id").asText();
            }
        }
        return createJson(api, "/v1/hosts", null, Map.of("name", name, "underlayIp", ip, "underlayPort", p))
                .path("id")
                .asText();
    }

    private static String create(ControlClient api, String path, String token, Object body) throws Exception {
        return createJson(api, path, token, body).path("id").asText();
    }

    private static JsonNode createJson(ControlClient api, String path, String token, Object body) throws Exception {
        ControlClient.Response r = api.send(
                "POST",
                path,
                body,
                token == null ? Map.of() : Map.of("Idempotency-Key", token),
                Duration.ofSeconds(30));
        if (!r.ok()) {
            throw new IllegalStateException(path + ": " + r.errorText());
        }
        return r.json();
    }
}
