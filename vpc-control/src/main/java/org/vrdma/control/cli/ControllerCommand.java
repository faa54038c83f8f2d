package org.vrdma.control.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.vrdma.control.api.Controller;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Runs the controller in the foreground until it is stopped (Ctrl-C or SIGTERM). */
@Command(
        name = "controller",
        mixinStandardHelpOptions = true,
        description = "Run the control plane: REST API, SQLite store, desired-state stream for host agents.")
public final class ControllerCommand implements java.util.concurrent.Callable<Integer> {
    /** File in the data directory holding the URL of the running controller, for the CLI. */
    public static final String ENDPOINT_FILE = "endpoint";

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", description = "where the store and the token live (default: ~/.vrdma/control)")
    Path dataDir;

    @Option(names = "--listen", defaultValue = "127.0.0.1", description = "address to bind (default: ${DEFAULT-VALUE})")
    String listen;

    @Option(
            names = "--port",
            defaultValue = "7480",
            description = "TCP port, 0 for any free one (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--run-seconds", hidden = true, description = "stop after this many seconds (tests, demos)")
    Long runSeconds;

    @Override
    public Integer call() throws Exception {
        Path dir = dataDir != null ? dataDir : ApiOptions.defaultDataDir();
        if (port < 0 || port > 0xFFFF) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--port must be 0..65535");
        }
        Controller controller;
        try {
            controller = Controller.start(dir, listen, port);
        } catch (java.io.IOException e) {
            spec.commandLine().getErr().println("vrdma controller: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            controller.close();
            stopped.countDown();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        Files.writeString(dir.resolve(ENDPOINT_FILE), controller.endpoint() + "\n");
        var out = spec.commandLine().getOut();
        out.println("controller listening on " + controller.endpoint());
        out.println("token file: " + controller.tokenFile());
        out.println("data directory: " + dir);
        out.flush();
        if (runSeconds != null) {
            stopped.await(runSeconds, TimeUnit.SECONDS);
            Runtime.getRuntime().removeShutdownHook(hook);
            controller.close();
        } else {
            stopped.await();
        }
        return 0;
    }
}
