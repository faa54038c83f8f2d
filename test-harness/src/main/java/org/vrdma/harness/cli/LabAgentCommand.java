package org.vrdma.harness.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.vrdma.harness.backend.FlowAgent;
import org.vrdma.vnic.transport.RecoveryMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One host of a lab's flow workloads on a real-time backend ({@link FlowAgent}): started by the
 * lab on every host (a thread, a process in a network namespace, or in a container), not by hand.
 */
@Command(
        name = "lab-agent",
        hidden = true,
        description = "One host of a real-time lab's flow workloads (started by ./vrdma lab run).")
final class LabAgentCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--index", required = true, description = "This host's position in --host.")
    int index;

    @Option(names = "--host", required = true, description = "name,eniIp,underlayIp,udpPort,ctlPort (each host).")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--vni", defaultValue = "100")
    int vni;

    @Option(names = "--mtu", defaultValue = "4096")
    int mtuBytes;

    @Option(names = "--recovery", defaultValue = "sr", description = "sr or gbn.")
    String recovery;

    @Option(names = "--message-bytes", defaultValue = "65536")
    int messageBytes;

    @Option(names = "--depth", defaultValue = "64")
    int depth;

    @Option(names = "--cc", defaultValue = "none")
    String cc;

    @Option(names = "--cc-config")
    String ccConfig;

    @Option(names = "--run-ns", required = true)
    long runNs;

    @Option(names = "--sample-ns", defaultValue = "1000000")
    long sampleNs;

    @Option(names = "--calibrate")
    boolean calibrate;

    @Option(names = "--flows", description = "id,dstIndex,bytes,startNs;... (the flows this host sends).")
    String flows;

    @Option(names = "--host-link", description = "This host's link to its switch, as a lab file gives it (JSON).")
    String hostLink;

    @Option(names = "--link-seed", defaultValue = "1", description = "Seed of the link's marking and faults.")
    long linkSeed;

    @Override
    public Integer call() throws Exception {
        List<FlowAgent.Host> hs = new ArrayList<>();
        for (String h : hosts) {
            hs.add(FlowAgent.Config.parseHost(h));
        }
        FlowAgent.Config c = new FlowAgent.Config(
                index,
                hs,
                vni,
                mtuBytes,
                recovery.equals("gbn") ? RecoveryMode.GO_BACK_N : RecoveryMode.SELECTIVE_REPEAT,
                messageBytes,
                depth,
                cc,
                ccConfig,
                runNs,
                sampleNs,
                calibrate,
                FlowAgent.Config.parseFlows(flows),
                hostLink,
                linkSeed);
        return FlowAgent.run(c, spec.commandLine().getOut());
    }
}
