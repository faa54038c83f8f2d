package org.vrdma.control.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The control plane's commands on their own ({@code java -cp ... org.vrdma.control.cli.ControlCli});
 * the {@code ./vrdma} launcher lists the same commands.
 */
@Command(
        name = "vrdma-control",
        mixinStandardHelpOptions = true,
        description = "vRDMA control plane: VPCs, subnets, hosts, ENIs, security groups, QoS policies.",
        subcommands = {
            ControllerCommand.class,
            UpCommand.class,
            Resources.VpcCommand.class,
            Resources.SubnetCommand.class,
            Resources.HostCommand.class,
            Resources.EniCommand.class,
            Resources.SecurityGroupCommand.class,
            Resources.QosCommand.class,
            CommandLine.HelpCommand.class
        })
public final class ControlCli {
    ControlCli() {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new ControlCli()).execute(args));
    }
}
