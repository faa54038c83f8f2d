package org.vrdma.harness.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import org.vrdma.harness.backend.RunningLab;
import org.vrdma.harness.backend.StaleLabs;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.SweepSpec;
import org.vrdma.harness.lab.TopologyGenerator;
import org.vrdma.harness.lab.report.CcFigures;
import org.vrdma.harness.lab.report.LabDescription;
import org.vrdma.harness.lab.report.LabRunner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ./vrdma lab}: run, check and benchmark lab files (test-harness/labs/). */
@Command(
        name = "lab",
        description =
                "Run lab files (hosts, VPCs, topology, CC, workloads) on a backend and write results, plots and a report.",
        subcommands = {
            LabCommand.Run.class,
            LabCommand.Validate.class,
            LabCommand.Backends.class,
            LabCommand.Cleanup.class,
            LabCommand.Figures.class,
            LabBenchCommand.class
        })
final class LabCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return 0;
    }

    static Lab load(String file, Long seed, Long durationUs) {
        Lab lab = LabLoader.load(Path.of(file));
        if (seed != null) {
            lab = lab.withSeed(seed);
        }
        if (durationUs != null) {
            lab = lab.withDurationUs(durationUs, lab.drainUs());
        }
        return lab;
    }

    @Command(
            name = "run",
            description =
                    "Run a lab (or replay a results.json) and write results.json, CSV, PNG plots and report.html.")
    static final class Run implements Callable<Integer> {
        @Mixin
        LabConsole console;

        @Parameters(
                index = "0",
                paramLabel = "FILE",
                description = "Lab file (.json, .yaml) or a results.json to replay.")
        String file;

        @Option(
                names = "--backend",
                defaultValue = LabBackends.DEFAULT,
                description = "Backend: virtual, embedded, netns, docker (default ${DEFAULT-VALUE}).")
        String backend;

        @Option(names = "--out", description = "Output directory (default lab-results/<lab name>).")
        Path out;

        @Option(names = "--seed", description = "Override the lab's seed.")
        Long seed;

        @Option(names = "--duration-us", description = "Override the lab's duration.")
        Long durationUs;

        @Option(names = "--no-plots", description = "Skip PNG plots and images in the report.")
        boolean noPlots;

        @Override
        public Integer call() {
            PrintStream err = System.err;
            try {
                Lab lab = load(file, seed, durationUs);
                LabBackend b = LabBackends.get(backend);
                String why = b.unavailableReason();
                if (why != null) {
                    err.println("vrdma lab run: backend " + backend + " cannot run here: " + why);
                    return 2;
                }
                Path dir = out != null ? out : Path.of("lab-results", lab.name());
                PrintStream stream = console.stream();
                stream.println("lab " + lab.name() + " on " + b.name() + ": "
                        + SweepSpec.expand(lab).size() + " run(s), " + TopologyGenerator.hostCount(lab.topology())
                        + " hosts, seed " + lab.seed() + " -> " + dir);
                new LabRunner(b, dir, stream, console.progress(), !noPlots).run(lab);
                stream.println("wrote " + dir.resolve("report.html"));
                return 0;
            } catch (LabException e) {
                err.println("vrdma lab run: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(
            name = "figures",
            description = "Regenerate the congestion-control tables and plots of the READMEs from real runs: the"
                    + " ready-made labs cc-comparison-star16, incast-32to1, fairness-convergence and loss-sweep"
                    + " (virtual time) and cc-compare; with --fat-tree also hpcc-fat-tree. Run from the repository"
                    + " root.")
    static final class Figures implements Callable<Integer> {
        @Mixin
        LabConsole console;

        @Option(
                names = "--root",
                defaultValue = ".",
                description = "Repository root: labs from test-harness/labs, plots to docs/img, READMEs rewritten"
                        + " (default: the current directory).")
        Path root;

        @Option(
                names = "--out",
                defaultValue = "lab-results/figures",
                description = "Every lab's results, CSV, plots and report.html, and the tables as Markdown"
                        + " (default ${DEFAULT-VALUE}).")
        Path out;

        @Option(names = "--no-readmes", description = "Write the tables to --out only; leave the READMEs alone.")
        boolean noReadmes;

        @Option(
                names = "--fat-tree",
                description = "Also run hpcc-fat-tree (320 hosts, DCQCN and HPCC: minutes of CPU) and"
                        + " rewrite its table; without it that table is left as it is.")
        boolean fatTree;

        @Override
        public Integer call() {
            try {
                if (!Files.isDirectory(root.resolve("test-harness/labs"))) {
                    console.err()
                            .println("vrdma lab figures: " + root.toAbsolutePath()
                                    + " is not the repository root (no test-harness/labs); use --root");
                    return 2;
                }
                PrintStream stream = console.stream();
                CcFigures figures = new CcFigures(root, out, LabBackends.get("virtual"), stream, console.progress())
                        .withFatTree(fatTree);
                Map<String, String> sections = figures.run();
                stream.println(
                        "wrote " + sections.size() + " tables to " + out + " and plots to " + root.resolve("docs/img"));
                if (!noReadmes) {
                    for (Path p : figures.updateReadmes(sections)) {
                        stream.println("updated " + p);
                    }
                }
                return 0;
            } catch (LabException e) {
                console.err().println("vrdma lab figures: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(
            name = "validate",
            description = "Check a lab file and print what it resolves to: seed and times, topology (hosts, switches,"
                    + " links and their rates), VPCs, transport, congestion control per ENI, PFC, workloads with"
                    + " their parameters, sweep runs, and whether the backend can run it here.")
    static final class Validate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE")
        String file;

        @Option(
                names = "--backend",
                defaultValue = LabBackends.DEFAULT,
                description =
                        "Backend the lab is meant for: virtual, embedded, netns, docker (default ${DEFAULT-VALUE}).")
        String backend;

        @Override
        public Integer call() {
            try {
                Lab lab = LabLoader.load(Path.of(file));
                LabBackend b = LabBackends.get(backend);
                var net = TopologyGenerator.resolve(lab);
                long switches = net.nodes().stream().filter(n -> !n.host()).count();
                var out = spec.commandLine().getOut();
                out.printf(
                        "%s: valid; %s topology, %d hosts, %d switches, %d links, %d workloads, %d run(s)%n",
                        file,
                        lab.topology().type(),
                        net.hosts().size(),
                        switches,
                        net.links().size(),
                        lab.workloads().size(),
                        SweepSpec.expand(lab).size());
                for (String line : LabDescription.lines(lab, net)) {
                    out.println(line);
                }
                String why = b.unavailableReason();
                out.println("backend: " + b.name() + " (" + b.description() + ")"
                        + (why == null ? "" : "; cannot run here: " + why));
                out.flush();
                return 0;
            } catch (LabException e) {
                spec.commandLine().getErr().println(file + ": " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(
            name = "cleanup",
            description = "Remove what labs left behind when their process was killed (kill -9, a CI timeout):"
                    + " host processes, network namespaces, containers, Docker networks and images, temporary"
                    + " directories. Only labs whose process no longer runs are touched.")
    static final class Cleanup implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(
                names = "--prefix",
                description = "Lab id prefix (default: -Dvrdma.lab.prefix or vrdma-lab; the project's tests use"
                        + " vrdma-backends).")
        String prefix;

        @Option(names = "--dry-run", description = "Only list what would be removed.")
        boolean dryRun;

        @Override
        public Integer call() {
            String p = prefix != null ? prefix : RunningLab.idPrefix();
            StaleLabs.Report r = StaleLabs.remove(p, dryRun);
            var out = spec.commandLine().getOut();
            for (String what : r.removed()) {
                out.println((dryRun ? "would remove " : "removed ") + what);
            }
            if (r.removed().isEmpty()) {
                out.println("nothing left behind by labs " + p + "-*");
            }
            for (String f : r.failures()) {
                spec.commandLine().getErr().println("vrdma lab cleanup: " + f);
            }
            return r.failures().isEmpty() ? 0 : 1;
        }
    }

    @Command(name = "backends", description = "List the lab backends and whether they can run here.")
    static final class Backends implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            for (Map.Entry<String, LabBackend> e : LabBackends.all().entrySet()) {
                String why = e.getValue().unavailableReason();
                spec.commandLine()
                        .getOut()
                        .printf(
                                "%-10s %s%s%n",
                                e.getKey(),
                                e.getValue().description(),
                                why == null ? "" : " (unavailable: " + why + ")");
            }
            return 0;
        }
    }

    /**
     * What the subcommands that run labs share: {@code --no-progress}, and the command's output and
     * error writers (so tests capture them), the output as the stream lab runs print to.
     */
    static final class LabConsole {
        @Spec(Spec.Target.MIXEE)
        CommandSpec spec;

        @Option(names = "--no-progress", description = "No progress bar.")
        boolean noProgress;

        boolean progress() {
            return !noProgress;
        }

        /** The command's output writer as a stream that flushes each line. */
        PrintStream stream() {
            return new PrintStream(new Forward(spec), true);
        }

        java.io.PrintWriter err() {
            return spec.commandLine().getErr();
        }
    }

    /** Forwards bytes to the command's output writer (so tests capture it). */
    static final class Forward extends java.io.OutputStream {
        private final CommandSpec spec;

        Forward(CommandSpec spec) {
            this.spec = spec;
        }

        @Override
        public void write(int b) {
            spec.commandLine().getOut().write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            spec.commandLine().getOut().write(new String(b, off, len, java.nio.charset.StandardCharsets.UTF_8));
        }

        @Override
        public void flush() {
            spec.commandLine().getOut().flush();
        }
    }
}
