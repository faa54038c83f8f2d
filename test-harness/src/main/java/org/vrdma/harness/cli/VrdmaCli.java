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
        System.exit(run(args));
    }

    /** Runs the command line and returns the exit code; tests call this instead of {@link #main}. */
    public static int run(String... args) {
        return new CommandLine(new VrdmaCli()).execute(args);
    }
}
