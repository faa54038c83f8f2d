package org.vrdma.harness.backend;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Image;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabRun;

/**
 * The Testcontainers backend: one container per host on a Docker network created for the lab
 * (MTU 9000, so a 4096-byte RoCE MTU fits one Geneve datagram); the VPC overlay runs between the
 * containers' addresses on it. Host runs start with {@code docker exec}.
 *
 * <p>No image is pulled: the host image is built here {@code FROM scratch} with one marker file,
 * and the machine's {@code /usr}, {@code /lib*}, {@code /bin}, {@code /etc}, the JDK and every
 * class-path entry are bind-mounted read-only at the same paths, so the container runs the same
 * code as the test. {@link Hosts#close()} removes the containers, the network and the image.
 * Testcontainers' own helper containers must be off (see the module README: Ryuk, checks, host
 * override, API version).
 *
 * <p>Names: the network is the lab id, host {@code h}'s container {@code <lab id>-h}, the image
 * {@code <lab id>-host}.
 */
public final class DockerBackend implements HostBackend, LabBackend {
    private static final int FIRST_PORT = 6081;
    private static final List<String> SYSTEM_DIRS = List.of("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc");

    @Override
    public String name() {
        return "docker";
    }

    @Override
    public String description() {
        return "real time, one container per host on a Docker network made for the lab (Testcontainers)";
    }

    @Override
    public String unavailableReason() {
        try {
            return DockerClientFactory.instance().isDockerAvailable() ? null : "no Docker engine answers";
        } catch (RuntimeException e) {
            return "no Docker engine answers: " + e.getMessage();
        }
    }

    /** Brings a lab definition up here: one ENI per host, one VPC, perftest workloads. */
    @Override
    public LabRun start(Lab lab) {
        return RealTimeLabRun.start(this, lab);
    }

    @Override
    public Hosts open(String labId, List<String> hostNames) {
        LabHosts lab = new LabHosts(labId);
        try {
            lab.create(hostNames);
            return lab;
        } catch (RuntimeException e) {
            lab.close();
            throw e;
        }
    }

    @Override
    public List<String> leftovers(String prefix) {
        DockerClient docker = DockerClientFactory.instance().client();
        List<String> found = new ArrayList<>();
        for (Container c : docker.listContainersCmd().withShowAll(true).exec()) {
            for (String n : c.getNames()) {
                if (n.startsWith("/" + prefix) || n.startsWith(prefix)) {
                    found.add("container " + n + " (" + c.getStatus() + ")");
                }
            }
        }
        for (var n : docker.listNetworksCmd().exec()) {
            if (n.getName().startsWith(prefix)) {
                found.add("Docker network " + n.getName());
            }
        }
        for (Image i : docker.listImagesCmd().exec()) {
            if (i.getRepoTags() != null) {
                for (String tag : i.getRepoTags()) {
                    if (tag.startsWith(prefix)) {
                        found.add("image " + tag);
                    }
                }
            }
        }
        return found;
    }

    /** The read-only binds: system directories, the JDK and the class path, without nested repeats. */
    static List<Path> binds() {
        List<Path> wanted = new ArrayList<>();
        for (String d : SYSTEM_DIRS) {
            if (Files.exists(Path.of(d))) {
                wanted.add(Path.of(d));
            }
        }
        wanted.add(VrdmaJava.javaHome());
        wanted.addAll(VrdmaJava.classPath());
        List<Path> out = new ArrayList<>();
        for (Path p : wanted) {
            boolean covered = out.stream().anyMatch(p::startsWith);
            if (!covered) {
                out.add(p);
            }
        }
        return out;
    }

    private static final class LabHosts implements Hosts {
        private final String labId;
        private final String imageName;
        private Network network;
        private final List<GenericContainer<?>> containers = new ArrayList<>();
        private final List<HostEnvironment> envs = new ArrayList<>();
        private final List<DockerRun> runs = new CopyOnWriteArrayList<>();
        private boolean imageBuilt;

        LabHosts(String labId) {
            this.labId = labId;
            this.imageName = labId + "-host:1";
        }

        void create(List<String> hostNames) {
            network = Network.builder()
                    .driver("bridge")
                    .createNetworkCmdModifier(
                            cmd -> cmd.withName(labId).withOptions(Map.of("com.docker.network.driver.mtu", "9000")))
                    .build();
            network.getId(); // creates it now, so a failure shows here
            // A Dockerfile given as a string: Testcontainers then does not try to pull its FROM.
            ImageFromDockerfile image = new ImageFromDockerfile(imageName, false)
                    .withFileFromString("Dockerfile", "FROM scratch\nADD vrdma-host /vrdma-host\n")
                    .withFileFromString("vrdma-host", "vRDMA lab host " + labId + "\n");
            List<Path> binds = binds();
            for (String host : hostNames) {
                GenericContainer<?> c = new GenericContainer<>(image);
                c.withNetwork(network)
                        .withNetworkAliases(host)
                        .withCreateContainerCmdModifier(
                                cmd -> cmd.withName(labId + "-" + host).withHostName(host))
                        .withCommand("/usr/bin/sleep", "infinity")
                        .withTmpFs(Map.of("/tmp", "rw,exec")) // Netty unpacks its epoll library here
                        .withEnv("HOME", "/tmp")
                        .withStartupTimeout(Duration.ofSeconds(60))
                        .waitingFor(new AbstractWaitStrategy() {
                            @Override
                            protected void waitUntilReady() {
                                // sleep is up as soon as the container runs
                            }
                        });
                for (Path b : binds) {
                    c.withFileSystemBind(b.toString(), b.toString(), BindMode.READ_ONLY);
                }
                containers.add(c);
            }
            imageBuilt = true;
            image.get(); // built once, before the containers start
            startAll();
            for (int i = 0; i < hostNames.size(); i++) {
                GenericContainer<?> c = containers.get(i);
                String ip = c.getContainerInfo()
                        .getNetworkSettings()
                        .getNetworks()
                        .get(labId)
                        .getIpAddress();
                envs.add(new Environment(hostNames.get(i), ip, c, this, new AtomicInteger(FIRST_PORT)));
            }
        }

        /** Starts the containers at once: each start is mostly waiting for the engine. */
        private void startAll() {
            List<Thread> starts = new ArrayList<>();
            List<RuntimeException> failures = new CopyOnWriteArrayList<>();
            for (GenericContainer<?> c : containers) {
                starts.add(Thread.ofPlatform().name(labId + "-start").start(() -> {
                    try {
                        c.start();
                    } catch (RuntimeException e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : starts) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while starting the lab's containers", e);
                }
            }
            if (!failures.isEmpty()) {
                throw failures.getFirst();
            }
        }

        @Override
        public List<HostEnvironment> environments() {
            return envs;
        }

        @Override
        public void close() {
            List<String> failures = new ArrayList<>();
            for (DockerRun r : runs) {
                r.abandon();
            }
            for (GenericContainer<?> c : containers.reversed()) {
                try {
                    c.stop(); // kills and removes the container
                } catch (RuntimeException e) {
                    failures.add("container: " + e.getMessage());
                }
            }
            containers.clear();
            if (network != null) {
                try {
                    network.close();
                } catch (RuntimeException e) {
                    failures.add("network " + labId + ": " + e.getMessage());
                }
            }
            if (imageBuilt) {
                try {
                    DockerClientFactory.instance()
                            .client()
                            .removeImageCmd(imageName)
                            .withForce(true)
                            .exec();
                } catch (com.github.dockerjava.api.exception.NotFoundException gone) {
                    // never built (the first container failed before)
                } catch (RuntimeException e) {
                    failures.add("image " + imageName + ": " + e.getMessage());
                }
            }
            if (!failures.isEmpty()) {
                throw new IllegalStateException("docker lab " + labId + " teardown: " + String.join("; ", failures));
            }
        }
    }

    private record Environment(
            String hostName, String underlayIp, GenericContainer<?> container, LabHosts lab, AtomicInteger nextPort)
            implements HostEnvironment {
        @Override
        public int allocatePort() {
            // The container's network stack is the lab's alone: counting up is enough.
            return nextPort.getAndIncrement();
        }

        @Override
        public HostRun start(String runName, List<String> vrdmaArgs) {
            DockerRun run = new DockerRun(container, runName, VrdmaJava.command(List.of(), lab.labId, vrdmaArgs));
            lab.runs.add(run);
            return run;
        }
    }

    /** One {@code docker exec} of a host JVM; its pid is kept in the container's /tmp so it can be killed. */
    private static final class DockerRun implements HostRun {
        private final GenericContainer<?> container;
        private final String pidFile;
        private final CompletableFuture<org.testcontainers.containers.Container.ExecResult> result;

        DockerRun(GenericContainer<?> container, String runName, List<String> command) {
            this.container = container;
            this.pidFile = "/tmp/" + runName.replaceAll("[^A-Za-z0-9._-]", "_") + ".pid";
            StringBuilder script = new StringBuilder("echo $$ > " + pidFile + " && exec");
            for (String arg : command) {
                script.append(' ').append(shellQuote(arg));
            }
            result = new CompletableFuture<>();
            // A thread per run: docker exec blocks until the process ends, and runs must overlap.
            Thread.ofPlatform().daemon().name("docker-exec-" + runName).start(() -> {
                try {
                    result.complete(container.execInContainer("/bin/sh", "-c", script.toString()));
                } catch (IOException | RuntimeException e) {
                    result.completeExceptionally(new IllegalStateException("docker exec failed: " + e.getMessage(), e));
                } catch (InterruptedException e) {
                    result.completeExceptionally(e);
                }
            });
        }

        private static String shellQuote(String s) {
            return "'" + s.replace("'", "'\\''") + "'";
        }

        @Override
        public int await(Duration timeout) throws InterruptedException {
            try {
                return (int)
                        result.get(timeout.toMillis(), TimeUnit.MILLISECONDS).getExitCode();
            } catch (TimeoutException e) {
                kill();
                return TIMED_OUT;
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
            }
        }

        @Override
        public boolean finished() {
            return result.isDone();
        }

        @Override
        public boolean outputWhileRunning() {
            return false;
        }

        @Override
        public String output() {
            var r = result.getNow(null);
            return r == null ? "(still running)" : r.getStdout() + r.getStderr();
        }

        @Override
        public void kill() {
            if (result.isDone()) {
                return;
            }
            try {
                container.execInContainer("/bin/sh", "-c", "[ -f " + pidFile + " ] && kill -9 $(cat " + pidFile + ")");
                result.get(15, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the container goes away with the lab, and the process with it
            }
        }

        /** The lab is closing: the container's removal ends the process; stop waiting for it. */
        void abandon() {
            result.cancel(true);
        }
    }
}
