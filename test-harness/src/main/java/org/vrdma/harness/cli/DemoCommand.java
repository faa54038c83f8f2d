package org.vrdma.harness.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The main job on the embedded default: a two-host VPC in one process with RDMA traffic. */
@Command(
        name = "demo",
        description =
                "Bring up a two-host VPC in this process and run perftest-style RDMA traffic over the lossy overlay.")
final class DemoCommand implements Callable<Integer> {
    /** Exit code when the demo cannot run yet because a component is missing. */
    static final int NOT_AVAILABLE = 3;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("vrdma demo: not available in this build.");
        err.println(
                "It needs the RC transport (vnic-model) and the vSwitch data path (vswitch), which are not built yet.");
        err.println("What runs today: the virtual-time link model, e.g. `./vrdma link --loss 0.01`.");
        return NOT_AVAILABLE;
    }
}
