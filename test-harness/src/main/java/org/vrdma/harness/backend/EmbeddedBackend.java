package org.vrdma.harness.backend;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.vrdma.harness.cli.VrdmaCli;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabRun;
import picocli.CommandLine;

/**
 * The in-process real-time backend (the default): every host is this JVM on 127.0.0.1, every host
 * run is {@code ./vrdma host} executed on a thread of its own, with its vSwitch on its own event
 * loop and real UDP between the vSwitches. Nothing to install, nothing outside the process to
 * clean up; it starts in milliseconds.
 */
public final class EmbeddedBackend implements HostBackend, LabBackend {
    private static final String LOOPBACK = "127.0.0.1";
    /** Ports handed out in this JVM: never handed out twice, so concurrent runs cannot collide. */
    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    @Override
    public String name() {
        return "embedded";
    }

    @Override
    public String description() {
        return "real time, every host in this process on 127.0.0.1, vSwitches over real UDP";
    }

    /** Brings a lab definition up here: one ENI per host, one VPC, perftest workloads. */
    @Override
    public LabRun start(Lab lab) {
        return RealTimeLabRun.start(this, lab);
    }

    @Override
    public Hosts open(String labId, List<String> hostNames) {
        List<ThreadRun> runs = new CopyOnWriteArrayList<>();
        List<HostEnvironment> envs = new ArrayList<>();
        for (String host : hostNames) {
            envs.add(new Environment(labId, host, runs));
        }
        return new Hosts() {
            @Override
            public List<HostEnvironment> environments() {
                return envs;
            }

            @Override
            public void close() {
                for (ThreadRun r : runs) {
                    r.kill();
                }
            }
        };
    }

    @Override
    public List<String> leftovers(String prefix) {
        List<String> found = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix) && t.isAlive()) {
                found.add("thread " + t.getName());
            }
        }
        return found;
    }

    private record Environment(String labId, String hostName, List<ThreadRun> runs) implements HostEnvironment {
        @Override
        public String underlayIp() {
            return LOOPBACK;
        }

        @Override
        public int allocatePort() throws IOException {
            for (int attempt = 0; attempt < 100; attempt++) {
                int port;
                try (DatagramSocket udp = new DatagramSocket(0, InetAddress.getByName(LOOPBACK))) {
                    port = udp.getLocalPort();
                }
                try (ServerSocket tcp = new ServerSocket(port, 1, InetAddress.getByName(LOOPBACK))) {
                    synchronized (HANDED_OUT) {
                        if (HANDED_OUT.add(port)) {
                            return port;
                        }
                    }
                } catch (IOException busy) {
                    // taken for TCP; try another
                }
            }
            throw new IOException("no port free for both UDP and TCP on " + LOOPBACK + " after 100 attempts");
        }

        @Override
        public HostRun start(String runName, List<String> vrdmaArgs) {
            ThreadRun run = new ThreadRun(labId + "-" + hostName + "-" + runName, vrdmaArgs);
            runs.add(run);
            return run;
        }
    }

    /** {@code ./vrdma args} on a thread of this process. */
    private static final class ThreadRun implements HostRun {
        private final StringWriter out = new StringWriter();
        private final StringWriter err = new StringWriter();
        private final Thread thread;
        private volatile int exit = Integer.MIN_VALUE;

        ThreadRun(String threadName, List<String> args) {
            thread = Thread.ofPlatform().name(threadName).daemon().start(() -> {
                CommandLine cli = new CommandLine(VrdmaCli.class);
                cli.setOut(new PrintWriter(out, true));
                cli.setErr(new PrintWriter(err, true));
                exit = cli.execute(args.toArray(String[]::new));
            });
        }

        @Override
        public int await(Duration timeout) throws InterruptedException {
            if (!thread.join(timeout)) {
                kill();
                return TIMED_OUT;
            }
            return exit;
        }

        @Override
        public boolean finished() {
            return !thread.isAlive();
        }

        @Override
        public String output() {
            return out + err.toString();
        }

        @Override
        public void kill() {
            if (thread.isAlive()) {
                // The host's waits are bounded and stop on interruption; its finally closes the vSwitch.
                thread.interrupt();
                try {
                    thread.join(TimeUnit.SECONDS.toMillis(15));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
