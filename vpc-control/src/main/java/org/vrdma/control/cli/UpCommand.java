package org.vrdma.control.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.vrdma.control.agent.HostAgent;
import org.vrdma.control.agent.InMemoryProgrammer;
import org.vrdma.control.api.Controller;
import org.vrdma.control.client.ControlClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A controller plus N host agents in this process, and a VPC with one vRDMA ENI per host, all made
 * through the REST API with client tokens (so running it again on the same data directory reuses
 * them). The agents program in-memory data planes until the vSwitch pipeline is wired in.
 */
@Command(
        name = "up",
        mixinStandardHelpOptions = true,
        description = "Start a controller and N host agents locally, with a VPC and one vRDMA ENI per host.")
public final class UpCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--hosts", defaultValue = "2", description = "host agents to start (default: ${DEFAULT-VALUE})")
    int hosts;

    @Option(names = "--data-dir", description = "where the store and the token live (default: ~/.vrdma/control)")
    Path dataDir;

    @Option(
            names = "--port",
            defaultValue = "7480",
            description = "API port, 0 for any free one (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--run-seconds", hidden = true, description = "stop after this many seconds (tests, demos)")
    Long runSeconds;

    @Override
    public Integer call() throws Exception {
        if (hosts < 1 || hosts > 64) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--hosts must be in 1..64");
        }
        Path dir = dataDir != null ? dataDir : ApiOptions.defaultDataDir();
        var out = spec.commandLine().getOut();
        Controller controller = Controller.start(dir, "127.0.0.1", port);
        List<HostAgent> agents = new ArrayList<>();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            agents.forEach(HostAgent::close);
            controller.close();
            stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        Files.writeString(dir.resolve(ControllerCommand.ENDPOINT_FILE), controller.endpoint() + "\n");
        try (ControlClient api = new ControlClient(controller.endpoint(), controller.token())) {
            String vpc = create(api, "/v1/vpcs", "up-vpc", Map.of("name", "up", "cidr", "10.0.0.0/16"));
            String subnet =
                    create(api, "/v1/subnets", "up-subnet", Map.of("name", "up", "vpcId", vpc, "cidr", "10.0.0.0/24"));
            for (int i = 0; i < hosts; i++) {
                String host = create(
                        api,
                        "/v1/hosts",
                        "up-host-" + i,
                        Map.of("name", "host-" + i, "underlayIp", "127.0.0.1", "underlayPort", 16081 + i));
                String eni = create(
                        api,
                        "/v1/enis",
                        "up-eni-" + i,
                        Map.of("name", "eni-" + i, "subnetId", subnet, "hostId", host, "vrdma", true));
                agents.add(new HostAgent(controller.endpoint(), controller.token(), host, new InMemoryProgrammer()));
                out.println("host " + host + " (agent started) with vRDMA ENI " + eni);
            }
            out.println("VPC " + vpc + ", subnet " + subnet);
        }
        out.println("controller listening on " + controller.endpoint());
        out.println("token file: " + controller.tokenFile());
        out.println("try: vrdma eni list --data-dir " + dir);
        out.flush();
        if (runSeconds != null) {
            stopped.await(runSeconds, TimeUnit.SECONDS);
            Runtime.getRuntime().removeShutdownHook(hook);
            hook.run();
        } else {
            stopped.await();
        }
        return 0;
    }

    private static String create(ControlClient api, String path, String token, Object body) throws Exception {
        ControlClient.Response r =
                api.send("POST", path, body, Map.of("Idempotency-Key", token), java.time.Duration.ofSeconds(30));
        if (!r.ok()) {
            throw new IllegalStateException(path + ": " + r.errorText());
        }
        return r.json().path("id").asText();
    }
}
