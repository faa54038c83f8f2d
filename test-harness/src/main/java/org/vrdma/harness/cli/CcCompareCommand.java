package org.vrdma.harness.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.vrdma.cc.CcConfigException;
import org.vrdma.cc.CongestionControls;
import org.vrdma.harness.ccsim.CcComparison;
import org.vrdma.harness.ccsim.CcComparison.Setup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Runs congestion-control algorithms through the virtual-time dumbbell (two long flows for
 * fairness, an N:1 incast) and prints the comparison table of the congestion-control README.
 */
@Command(
        name = "cc-compare",
        description = "Compare congestion controls on a 100 Gbit/s dumbbell in virtual time: fairness of two"
                + " long flows and an N:1 incast. Deterministic for a seed.")
final class CcCompareCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--algorithms",
            split = ",",
            paramLabel = "NAME",
            description = "Algorithms to run, comma-separated (default: dcqcn,timely,swift,hpcc,dctcp,static;"
                    + " any registered name, plug-ins included).")
    List<String> algorithms;

    @Option(
            names = "--config",
            paramLabel = "NAME=JSON",
            description = "JSON configuration of an algorithm, replacing the table's (repeatable), e.g."
                    + " --config 'dcqcn={\"byteCounterBytes\": 10485760}'.")
    Map<String, String> configs = new LinkedHashMap<>();

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the runs (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--markdown", description = "Print a Markdown table instead of aligned text.")
    boolean markdown;

    @Option(
            names = "--run-us",
            defaultValue = "10000",
            description = "Length of the two-flow run in µs, a multiple of 100 (default ${DEFAULT-VALUE}).")
    long runUs;

    @Option(
            names = "--second-flow-us",
            defaultValue = "1000",
            description = "Start of the second long flow in µs (default ${DEFAULT-VALUE}).")
    long secondFlowUs;

    @Option(
            names = "--window-us",
            defaultValue = "2000",
            description = "Fairness and goodput are measured over the last this-many µs of the run, a multiple"
                    + " of 100 (default ${DEFAULT-VALUE}).")
    long windowUs;

    @Option(
            names = "--incast-senders",
            defaultValue = "16",
            description = "Senders of the incast (default ${DEFAULT-VALUE}).")
    int incastSenders;

    @Option(
            names = "--incast-bytes",
            defaultValue = "1000000",
            description = "Bytes each incast sender sends (default ${DEFAULT-VALUE}).")
    long incastBytes;

    @Option(
            names = "--incast-deadline-us",
            defaultValue = "50000",
            description = "The incast stops here if unfinished, in µs (default ${DEFAULT-VALUE}).")
    long incastDeadlineUs;

    @Override
    public Integer call() {
        final PrintWriter out = spec.commandLine().getOut();
        final Setup setup;
        try {
            setup = new Setup(
                    runUs * 1_000,
                    secondFlowUs * 1_000,
                    windowUs * 1_000,
                    incastSenders,
                    incastBytes,
                    incastDeadlineUs * 1_000);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        final Map<String, String> selected = selectedAlgorithms();
        final List<CcComparison.Row> rows;
        try {
            rows = CcComparison.runAll(selected, setup, seed);
        } catch (CcConfigException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        out.print(markdown ? CcComparison.toMarkdown(rows, setup, seed) : CcComparison.toText(rows, setup, seed));
        out.flush();
        return 0;
    }

    private Map<String, String> selectedAlgorithms() {
        final List<String> names =
                algorithms == null || algorithms.isEmpty() ? List.copyOf(CcComparison.ALGORITHMS.keySet()) : algorithms;
        final CongestionControls registry = CongestionControls.defaults();
        for (final String name : configs.keySet()) {
            if (!names.contains(name)) {
                throw new ParameterException(
                        spec.commandLine(), "--config names '" + name + "', which is not among the algorithms run");
            }
        }
        final Map<String, String> selected = new LinkedHashMap<>();
        for (final String name : names) {
            if (!registry.contains(name)) {
                throw new ParameterException(
                        spec.commandLine(),
                        "unknown algorithm '" + name + "'; known: "
                                + String.join(", ", new TreeSet<>(registry.names())));
            }
            selected.put(name, configs.getOrDefault(name, CcComparison.ALGORITHMS.getOrDefault(name, "")));
        }
        return selected;
    }
}
