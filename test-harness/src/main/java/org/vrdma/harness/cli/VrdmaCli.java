package org.vrdma.harness.cli;

import org.vrdma.control.cli.ControllerCommand;
import org.vrdma.control.cli.Resources;
import org.vrdma.control.cli.UpCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;

/** Entry point of the {@code ./vrdma} launcher. Each subcommand lives in its own class. */
@Command(
        name = "vrdma",
        mixinStandardHelpOptions = true,
        // Every subcommand takes --help (and --version) too.
        scope = ScopeType.INHERIT,
        versionProvider = VersionProvider.class,
        description = "Virtualized RDMA device emulator: RoCEv2 verbs over a Geneve VPC overlay on lossy UDP.",
        subcommands = {
            DemoCommand.class,
            BenchCommand.class,
            VerbsBenchCommand.class,
            LinkCommand.class,
            LabCommand.class,
            CcCompareCommand.class,
            UpCommand.class,
            ControllerCommand.class,
            Resources.VpcCommand.class,
            Resources.SubnetCommand.class,
            HostCommand.class,
            LabAgentCommand.class,
            Resources.EniCommand.class,
            Resources.SecurityGroupCommand.class,
            Resources.QosCommand.class,
            CommandLine.HelpCommand.class
        })
public final class VrdmaCli {
    VrdmaCli() {}

    public static void main(String[] args) {
        quietLibraryLogs();
        System.exit(run(args));
    }

    /**
     * Testcontainers and docker-java log at INFO on every Docker probe, and the probe logs a
     * multi-line ERROR when no engine answers, after which the docker backend says so in one line:
     * on the command line only warnings (and none from the probe) get through, unless a {@code -D}
     * (e.g. in {@code VRDMA_JAVA_OPTS}) sets the level. Tests call {@link #run}, which keeps them.
     */
    static void quietLibraryLogs() {
        quiet("org.testcontainers", "warn");
        quiet("org.testcontainers.dockerclient", "off");
        // The launcher turns Ryuk off on purpose; its warning about that says nothing new.
        quiet("org.testcontainers.utility.ResourceReaper", "error");
        quiet("com.github.dockerjava", "warn");
        // Testcontainers logs each container's start under "tc.<image>".
        quiet("tc", "warn");
    }

    private static void quiet(String logger, String level) {
        String key = "org.slf4j.simpleLogger.log." + logger;
        if (System.getProperty(key) == null) {
            System.setProperty(key, level);
        }
    }

    /** Runs the command line and returns the exit code; tests call this instead of {@link #main}. */
    public static int run(String... args) {
        return new CommandLine(new VrdmaCli()).execute(args);
    }
}
