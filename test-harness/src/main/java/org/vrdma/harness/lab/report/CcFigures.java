package org.vrdma.harness.lab.report;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.vrdma.harness.ccsim.CcComparison;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabException;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.stats.Percentiles;

/**
 * Regenerates the congestion-control figures the READMEs embed, from real runs: the ready-made
 * labs {@code cc-comparison-star16}, {@code incast-32to1}, {@code fairness-convergence} and
 * {@code loss-sweep} in virtual time, and the dumbbell comparison of {@code ./vrdma cc-compare}.
 *
 * <p>Each lab runs through {@link LabRunner} into {@code out/<lab>} (results, CSV, plots,
 * report.html, so every figure can be traced to a replayable {@code results.json}); the tables go
 * to {@code out/*.md} and, between {@code <!-- BEGIN generated NAME -->} and {@code <!-- END
 * generated NAME -->} markers, into the READMEs; the plots the READMEs embed go to {@code
 * docs/img/}. Everything is a function of the lab files and seeds, so a re-run after a transport
 * or CC change shows exactly what changed.
 */
public final class CcFigures {
    /** The READMEs whose generated sections this rewrites, relative to the repository root. */
    public static final List<String> READMES =
            List.of("README.md", "congestion-control/README.md", "test-harness/README.md");

    /**
     * Sections only some runs generate (the fat tree behind {@code --fat-tree}, minutes of CPU): a
     * run without them leaves their README text as it is.
     */
    public static final Set<String> OPTIONAL_SECTIONS = Set.of("cc-fat-tree-table");

    private static final Pattern SECTION = Pattern.compile(
            "(<!-- BEGIN generated ([a-z0-9-]+)[^>]*-->\\n)(.*?)(<!-- END generated \\2 -->)", Pattern.DOTALL);

    private final Path root;
    private final Path out;
    private final LabBackend backend;
    private final PrintStream console;
    private final boolean progress;
    private final CcComparison.Setup compareSetup;
    private boolean fatTree;

    /**
     * @param root repository root: labs are read from {@code test-harness/labs}, plots written to
     *     {@code docs/img}
     * @param out directory for every lab's results and the Markdown tables
     */
    public CcFigures(Path root, Path out, LabBackend backend, PrintStream console, boolean progress) {
        this(root, out, backend, console, progress, CcComparison.Setup.DEFAULT);
    }

    /** As above, with the dumbbell comparison's experiment lengths (the README's are the default). */
    public CcFigures(
            Path root,
            Path out,
            LabBackend backend,
            PrintStream console,
            boolean progress,
            CcComparison.Setup compareSetup) {
        this.root = root;
        this.compareSetup = compareSetup;
        this.out = out;
        this.backend = backend;
        this.console = console;
        this.progress = progress;
    }

    /**
     * Also runs {@code hpcc-fat-tree.json} (320 hosts, DCQCN and HPCC; about 10 s of CPU per 10 ms
     * of lab time each) and {@code hpcc-fat-tree-pfc.json} (the same with priority flow control)
     * and generates {@code cc-fat-tree-table} and {@code lab-cc-fat-tree-*.png}.
     */
    public CcFigures withFatTree(boolean on) {
        this.fatTree = on;
        return this;
    }

    /** Runs everything and returns the generated sections by name (also written to {@code out}). */
    public Map<String, String> run() {
        Map<String, String> sections = new LinkedHashMap<>();
        List<LabRunner.Outcome> star = runLab("cc-comparison-star16.json");
        sections.put("cc-star16-table", star16Table(star));
        plot("lab-cc-comparison-star16-p99.png", comparisonPlot(star, 99, "p99"));
        plot("lab-cc-comparison-star16-p50.png", comparisonPlot(star, 50, "p50"));

        List<LabRunner.Outcome> incast = runLab("incast-32to1.yaml");
        sections.put("cc-incast-table", incastTable(incast));
        plot(
                "lab-cc-incast-queue.png",
                Plots.overlay(
                        "32:1 incast: queue at the receiver's port (busiest port)",
                        "queue depth, kB",
                        byVariant(incast, LabResults::queues),
                        3_000));

        List<LabRunner.Outcome> fair = runLab("fairness-convergence.json");
        sections.put("cc-fairness-table", fairnessTable(fair));
        plot(
                "lab-cc-fairness-throughput.png",
                Plots.overlay(
                        "Four long flows into one port: goodput received",
                        "Gbit/s received",
                        byVariant(fair, LabResults::throughput),
                        Long.MAX_VALUE));

        List<LabRunner.Outcome> loss = runLab("loss-sweep.json");
        sections.put("loss-sweep-table", lossTable(loss));
        plot("lab-loss-sweep.png", lossPlot(loss));

        if (fatTree) {
            List<LabRunner.Outcome> tree = new ArrayList<>(runLab("hpcc-fat-tree.json"));
            for (LabRunner.Outcome o : runLab("hpcc-fat-tree-pfc.json")) {
                tree.add(new LabRunner.Outcome(o.label() + " pfc=on", o.dir(), o.results(), o.wallSeconds()));
            }
            sections.put("cc-fat-tree-table", fatTreeTable(tree));
            plot("lab-cc-fat-tree-p99.png", fatTreePlot(tree, 99));
            plot("lab-cc-fat-tree-p95.png", fatTreePlot(tree, 95));
        }

        console.println("cc-compare (dumbbell, virtual time)");
        List<CcComparison.Row> rows = CcComparison.runAll(CcComparison.ALGORITHMS, compareSetup, 1);
        sections.put("cc-compare-table", CcComparison.toMarkdown(rows, compareSetup, 1));

        try {
            Files.createDirectories(out);
            for (Map.Entry<String, String> e : sections.entrySet()) {
                Files.writeString(out.resolve(e.getKey() + ".md"), e.getValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sections;
    }

    /** Rewrites the generated sections of the READMEs under {@code root}; returns the files changed. */
    public List<Path> updateReadmes(Map<String, String> sections) {
        List<Path> changed = new ArrayList<>();
        for (String name : READMES) {
            Path file = root.resolve(name);
            try {
                String before = Files.readString(file);
                String after = replaceSections(before, sections, name);
                if (!after.equals(before)) {
                    Files.writeString(file, after);
                    changed.add(file);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return changed;
    }

    /**
     * Replaces the body of every {@code <!-- BEGIN generated NAME -->} ... {@code <!-- END
     * generated NAME -->} section by {@code sections.get(NAME)}.
     *
     * @throws LabException naming the file when a marked section has no generated content
     */
    public static String replaceSections(String text, Map<String, String> sections, String fileName) {
        Matcher m = SECTION.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String body = sections.get(m.group(2));
            if (body == null && OPTIONAL_SECTIONS.contains(m.group(2))) {
                m.appendReplacement(sb, Matcher.quoteReplacement(m.group()));
                continue;
            }
            if (body == null) {
                throw new LabException(
                        fileName, "generated section '" + m.group(2) + "' is not one of " + sections.keySet());
            }
            String replacement = m.group(1) + (body.endsWith("\n") ? body : body + "\n") + m.group(4);
            m.appendReplacement(sb, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private List<LabRunner.Outcome> runLab(String file) {
        Lab lab = LabLoader.load(root.resolve("test-harness/labs").resolve(file));
        console.println("lab " + lab.name());
        return new LabRunner(backend, out.resolve(lab.name()), console, progress, true).run(lab);
    }

    private void plot(String name, byte[] png) {
        try {
            Path dir = root.resolve("docs/img");
            Files.createDirectories(dir);
            Files.write(dir.resolve(name), png);
            Files.createDirectories(out);
            Files.write(out.resolve(name), png);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ---- tables

    /** Sweep label {@code cc=dcqcn load=0.3} as {@code DCQCN 30%}. */
    static String display(String label) {
        List<String> parts = new ArrayList<>();
        for (String kv : label.split(" ")) {
            int eq = kv.indexOf('=');
            if (eq < 0) {
                parts.add(kv);
                continue;
            }
            String k = kv.substring(0, eq);
            String v = kv.substring(eq + 1);
            parts.add(
                    switch (k) {
                        case "cc" -> algorithm(v);
                        case "load" -> percent(Double.parseDouble(v));
                        case "recovery" -> v.equals("gbn") ? "go-back-N" : v.equals("sr") ? "selective repeat" : v;
                        case "loss" -> "loss " + percent(Double.parseDouble(v));
                        case "pfc" -> "on".equals(v) ? "+PFC" : "";
                        default -> kv;
                    });
        }
        return String.join(" ", parts).replace(" +PFC", "+PFC").strip();
    }

    static String algorithm(String name) {
        return switch (name) {
            case "dcqcn" -> "DCQCN";
            case "timely" -> "TIMELY";
            case "swift" -> "Swift";
            case "hpcc" -> "HPCC";
            case "dctcp" -> "DCTCP";
            default -> name;
        };
    }

    private static String percent(double fraction) {
        return new java.math.BigDecimal(fraction * 100)
                        .round(new java.math.MathContext(6))
                        .stripTrailingZeros()
                        .toPlainString()
                + "%";
    }

    static String fmt(double v) {
        if (v == 0) {
            return "0";
        }
        double a = Math.abs(v);
        String f = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 0.1 ? "%.2f" : "%.4f";
        return String.format(Locale.ROOT, f, v);
    }

    /**
     * A percentile of the slowdowns of the flows {@code minBytes < size <= maxBytes}; an unfinished
     * flow counts as (end of run - start) / ideal FCT, a lower bound, and the figure is then
     * prefixed with ≥.
     */
    static String slowdown(LabResults r, long minBytes, long maxBytes, double p) {
        List<LabResults.FlowResult> in = r.flows().stream()
                .filter(f -> f.bytes() > minBytes && f.bytes() <= maxBytes && f.idealFctNs() > 0)
                .toList();
        if (in.isEmpty()) {
            return "–";
        }
        boolean bound = false;
        double[] s = new double[in.size()];
        for (int i = 0; i < s.length; i++) {
            LabResults.FlowResult f = in.get(i);
            if (f.endNs() >= 0) {
                s[i] = f.slowdown();
            } else {
                s[i] = (double) Math.max(0, r.endNs() - f.startNs()) / f.idealFctNs();
                bound = true;
            }
        }
        Arrays.sort(s);
        return (bound ? "≥" : "") + fmt(Percentiles.of(s, p));
    }

    /** Largest and p99 sample of the busiest queue series, in kB. */
    static double[] queue(LabResults r) {
        double max = 0;
        double p99 = 0;
        for (LabResults.Series s : r.queues().series()) {
            double[] v = s.values().clone();
            if (v.length == 0) {
                continue;
            }
            Arrays.sort(v);
            max = Math.max(max, v[v.length - 1]);
            p99 = Math.max(p99, Percentiles.of(v, 99));
        }
        return new double[] {p99, max};
    }

    /** Mean of the busiest queue series (largest mean) over [0, untilNs), in kB. */
    static double meanQueueKb(LabResults r, long untilNs) {
        double best = 0;
        int n = (int) Math.max(1, untilNs / r.queues().intervalNs());
        for (LabResults.Series s : r.queues().series()) {
            double[] v = s.values();
            int m = Math.min(n, v.length);
            double sum = 0;
            for (int i = 0; i < m; i++) {
                sum += v[i];
            }
            best = Math.max(best, m == 0 ? 0 : sum / m);
        }
        return best;
    }

    private static long lastEndNs(LabResults r) {
        return r.flows().stream().mapToLong(LabResults.FlowResult::endNs).max().orElse(-1);
    }

    private static String done(LabResults.Counters c) {
        return c.flowsFinished() + "/" + c.flowsStarted();
    }

    private static String table(List<String> header, List<List<String>> rows) {
        StringBuilder sb =
                new StringBuilder("| ").append(String.join(" | ", header)).append(" |\n|");
        for (int i = 0; i < header.size(); i++) {
            sb.append(i == 0 ? "---|" : "---:|");
        }
        sb.append('\n');
        for (List<String> row : rows) {
            sb.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return sb.toString();
    }

    private static String source(List<LabRunner.Outcome> outcomes) {
        Lab lab = outcomes.getFirst().results().lab();
        return "`test-harness/labs/" + lab.name() + "`, virtual time, seed " + lab.seed()
                + "; generated by `./vrdma lab figures`";
    }

    /** A column of a table with a row per variant: its header and its cell for one variant's run. */
    private record Column(String header, Function<LabRunner.Outcome, String> cell) {
        static Column of(String header, Function<LabResults, String> cell) {
            return new Column(header, o -> cell.apply(o.results()));
        }
    }

    private static final Column VARIANT = new Column("variant", o -> display(o.label()));
    private static final Column FLOWS_DONE = Column.of("flows done", r -> done(r.counters()));
    private static final Column RETRANSMITTED =
            Column.of("retransmitted", r -> Long.toString(r.counters().retransmittedPackets()));
    private static final Column TIMEOUTS =
            Column.of("timeouts", r -> Long.toString(r.counters().timeouts()));
    /** Timeouts whose resent packet had arrived: a delay, not a loss, outran the timer. */
    private static final Column SPURIOUS =
            Column.of("spurious", r -> Long.toString(r.counters().spuriousTimeouts()));

    private static final Column CNPS =
            Column.of("CNPs", r -> Long.toString(r.counters().cnpsSent()));
    /** Buffer drops and injected losses. */
    private static final Column DROPS = Column.of(
            "drops",
            r -> Long.toString(r.counters().bufferDrops() + r.counters().injectedLosses()));

    private static final Column QUEUE_P99 = Column.of("queue p99 kB", r -> fmt(queue(r)[0]));
    private static final Column QUEUE_MAX = Column.of("queue max kB", r -> fmt(queue(r)[1]));
    private static final Column LAST_FLOW_DONE = Column.of("last flow done ms", r -> fmt(lastEndNs(r) / 1e6));

    /** A PFC counter of the run; "–" for a run without PFC. */
    private static Column pfcColumn(String header, Function<LabResults.Pfc, String> cell) {
        return Column.of(header, r -> r.pfc() == null ? "–" : cell.apply(r.pfc()));
    }

    /** Percentile {@code p} of the slowdowns of the flows {@code minBytes < size <= maxBytes}. */
    private static Column slowdownColumn(String header, long minBytes, long maxBytes, double p) {
        return Column.of(header, r -> slowdown(r, minBytes, maxBytes, p));
    }

    /** Percentile {@code p} of the finished flows' FCTs, in µs. */
    private static Column fctColumn(String header, double p) {
        return Column.of(header, r -> {
            double[] fct = r.flows().stream()
                    .filter(f -> f.fctNs() >= 0)
                    .mapToDouble(f -> f.fctNs() / 1000.0)
                    .sorted()
                    .toArray();
            return fct.length == 0 ? "–" : fmt(Percentiles.of(fct, p));
        });
    }

    /** A row per variant (outcome), a column each. */
    private static String variantTable(List<LabRunner.Outcome> outcomes, List<Column> columns) {
        List<List<String>> rows = new ArrayList<>();
        for (LabRunner.Outcome o : outcomes) {
            rows.add(columns.stream().map(c -> c.cell().apply(o)).toList());
        }
        return table(columns.stream().map(Column::header).toList(), rows);
    }

    static String star16Table(List<LabRunner.Outcome> outcomes) {
        return "Source: " + source(outcomes) + ". Slowdown = FCT / ideal FCT (the flow alone on the empty"
                + " network), nearest-rank percentiles over all flows; ≥ marks a lower bound from flows"
                + " still sending when the run ended; spurious: timeouts whose resent packet had in fact arrived.\n\n"
                + variantTable(
                        outcomes,
                        List.of(
                                VARIANT,
                                FLOWS_DONE,
                                slowdownColumn("p50 slowdown", -1, Long.MAX_VALUE, 50),
                                slowdownColumn("p99", -1, Long.MAX_VALUE, 99),
                                slowdownColumn("p99 ≤ 100 kB", -1, 100_000, 99),
                                slowdownColumn("p50 > 1 MB", 1_000_000, Long.MAX_VALUE, 50),
                                slowdownColumn("p99 > 1 MB", 1_000_000, Long.MAX_VALUE, 99),
                                RETRANSMITTED,
                                TIMEOUTS,
                                SPURIOUS,
                                CNPS,
                                DROPS,
                                QUEUE_P99,
                                QUEUE_MAX,
                                LAST_FLOW_DONE));
    }

    static String incastTable(List<LabRunner.Outcome> outcomes) {
        return "Source: " + source(outcomes) + ". FCT of each 256 KiB flow (ideal alone: "
                + fmt(outcomes.getFirst().results().flows().getFirst().idealFctNs() / 1000.0)
                + " µs; a round of 32 needs at least 32 × that at line rate); queue sampled every "
                + outcomes.getFirst().results().queues().intervalNs() / 1000
                + " µs at the busiest port (the receiver's), mean until the last flow is done; spurious: timeouts"
                + " whose resent packet had in fact arrived (the responder's duplicate ACK showed it).\n\n"
                + variantTable(
                        outcomes,
                        List.of(
                                VARIANT,
                                FLOWS_DONE,
                                fctColumn("FCT p50 µs", 50),
                                fctColumn("FCT p99 µs", 99),
                                slowdownColumn("p99 slowdown", -1, Long.MAX_VALUE, 99),
                                Column.of("queue mean kB", r -> fmt(meanQueueKb(r, lastEndNs(r)))),
                                QUEUE_MAX,
                                DROPS,
                                RETRANSMITTED,
                                TIMEOUTS,
                                SPURIOUS,
                                CNPS,
                                LAST_FLOW_DONE));
    }

    /**
     * The fat tree, as the HPCC paper's Fig. 11 shows it: slowdown p50/p95/p99 per flow-size bucket
     * for each variant side by side, then per variant the counters and the busiest queue.
     */
    static String fatTreeTable(List<LabRunner.Outcome> outcomes) {
        List<String> header = new ArrayList<>(List.of("flow size"));
        for (LabRunner.Outcome o : outcomes) {
            String v = display(o.label());
            header.addAll(List.of(v + " flows", v + " p50", v + " p95", v + " p99"));
        }
        List<List<String>> rows = new ArrayList<>();
        long lower = -1;
        for (long upper : Percentiles.BUCKET_BOUNDS) {
            List<String> row = new ArrayList<>();
            row.add(
                    upper == Long.MAX_VALUE
                            ? "> " + size(lower)
                            : lower < 0 ? "≤ " + size(upper) : size(lower) + "–" + size(upper));
            boolean any = false;
            for (LabRunner.Outcome o : outcomes) {
                LabResults r = o.results();
                long lo = lower;
                long n = r.flows().stream()
                        .filter(f -> f.bytes() > lo && f.bytes() <= upper && f.idealFctNs() > 0)
                        .count();
                long open = r.flows().stream()
                        .filter(f -> f.bytes() > lo && f.bytes() <= upper && f.idealFctNs() > 0 && f.endNs() < 0)
                        .count();
                any |= n > 0;
                row.add(open == 0 ? Long.toString(n) : (n - open) + "/" + n);
                row.add(slowdown(r, lower, upper, 50));
                row.add(slowdown(r, lower, upper, 95));
                row.add(slowdown(r, lower, upper, 99));
            }
            if (any) {
                rows.add(row);
            }
            lower = upper;
        }
        List<String> all = new ArrayList<>(List.of("all"));
        for (LabRunner.Outcome o : outcomes) {
            LabResults r = o.results();
            all.add(done(r.counters()));
            all.add(slowdown(r, -1, Long.MAX_VALUE, 50));
            all.add(slowdown(r, -1, Long.MAX_VALUE, 95));
            all.add(slowdown(r, -1, Long.MAX_VALUE, 99));
        }
        rows.add(all);

        Lab lab = outcomes.getFirst().results().lab();
        return "Source: " + source(outcomes).replace("figures`", "figures --fat-tree`") + " (flows start for "
                + fmt(lab.durationUs() / 1000.0)
                + " ms, then up to " + fmt(lab.drainUs() / 1000.0) + " ms to drain). Slowdown = FCT / ideal FCT"
                + " (the flow alone on the empty network), nearest-rank percentiles over the flows of the size"
                + " bucket; flows column: done/started where some were still sending when the run ended, whose"
                + " (end of run - start) / ideal FCT counts as a lower bound, marked ≥.\n\n"
                + table(header, rows)
                + "\nQueue: the busiest switch port, sampled every "
                + r0(outcomes).queues().intervalNs() / 1000
                + " µs. Drops are buffer drops (with PFC: lossless packets dropped for lack of headroom)."
                + " PFC: PAUSE frames sent by switches (refreshes included), time link directions spent paused,"
                + " hosts' NICs paused and their paused time, packets that waited in a paused port (– : no PFC).\n\n"
                + variantTable(
                        outcomes,
                        List.of(
                                VARIANT,
                                FLOWS_DONE,
                                QUEUE_P99,
                                QUEUE_MAX,
                                CNPS,
                                Column.of(
                                        "ECN marks",
                                        r -> Long.toString(r.counters().ecnMarks())),
                                DROPS,
                                RETRANSMITTED,
                                TIMEOUTS,
                                SPURIOUS,
                                Column.of(
                                        "link transmissions",
                                        r -> Long.toString(r.counters().linkTransmissions())),
                                LAST_FLOW_DONE,
                                pfcColumn("PAUSE frames", p -> Long.toString(p.pauseFramesSent())),
                                pfcColumn("paused ms", p -> fmt(p.pausedNs() / 1e6)),
                                pfcColumn(
                                        "NICs paused / ms",
                                        p -> p.hostNicsPaused() + " / " + fmt(p.hostNicPausedNs() / 1e6)),
                                pfcColumn("held behind pauses", p -> Long.toString(p.pauseDelayedPackets()))));
    }

    private static LabResults r0(List<LabRunner.Outcome> outcomes) {
        return outcomes.getFirst().results();
    }

    private static String size(long bytes) {
        return bytes >= 1_000_000 ? bytes / 1_000_000 + " MB" : bytes / 1000 + " kB";
    }

    /**
     * Per flow, FCT against its FCT under ideal fair sharing (processor sharing of the bottleneck
     * among the flows present, at the rate each flow reaches alone): 1.0 is a perfectly fair,
     * fully used port.
     */
    static String fairnessTable(List<LabRunner.Outcome> outcomes) {
        List<LabResults.FlowResult> first = outcomes.getFirst().results().flows();
        double[] fairNs = fairShareFctNs(first);
        List<Column> columns = new ArrayList<>(List.of(VARIANT, FLOWS_DONE));
        for (int i = 0; i < first.size(); i++) {
            LabResults.FlowResult f0 = first.get(i);
            double fair = fairNs[i];
            int flow = i;
            columns.add(Column.of(
                    String.format(
                            Locale.ROOT,
                            "%s %.0f MB from %.0f ms",
                            f0.src().replace("/eni0", ""),
                            f0.bytes() / 1e6,
                            f0.startNs() / 1e6),
                    r -> {
                        LabResults.FlowResult f = r.flows().get(flow);
                        return f.endNs() >= 0 ? fmt(f.fctNs() / fair) : "≥" + fmt((r.endNs() - f.startNs()) / fair);
                    }));
        }
        columns.addAll(List.of(
                Column.of("goodput Gbit/s", r -> fmt(meanGbps(r, first))), QUEUE_MAX, DROPS, RETRANSMITTED));
        StringBuilder fair = new StringBuilder();
        for (int i = 0; i < fairNs.length; i++) {
            fair.append(i == 0 ? "" : ", ").append(fmt(fairNs[i] / 1e6));
        }
        return "Source: " + source(outcomes) + ". Per flow: FCT / FCT under ideal fair sharing (the port"
                + " shared equally by the flows present; " + fair + " ms); 1.00 is fair and fully used,"
                + " ≥ a flow still sending at the end. Goodput: mean received while the flows last"
                + " (ideal sharing).\n\n" + variantTable(outcomes, columns);
    }

    /** Mean goodput into the receivers from the first flow start to the ideal end of the last flow. */
    private static double meanGbps(LabResults r, List<LabResults.FlowResult> flows) {
        double[] all = r.throughput().series().getFirst().values();
        long interval = r.throughput().intervalNs();
        double[] fair = fairShareFctNs(flows);
        long endNs = 0;
        for (int i = 0; i < flows.size(); i++) {
            endNs = Math.max(endNs, flows.get(i).startNs() + (long) fair[i]);
        }
        int n = (int) Math.min(all.length, endNs / interval);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += all[i];
        }
        return n == 0 ? 0 : sum / n;
    }

    /** Processor-sharing completion times (ns) of the flows, each at the rate its ideal FCT implies. */
    static double[] fairShareFctNs(List<LabResults.FlowResult> flows) {
        int n = flows.size();
        double[] left = new double[n];
        double[] end = new double[n];
        double rate = 0; // bytes per ns of the port
        for (int i = 0; i < n; i++) {
            left[i] = flows.get(i).bytes();
            end[i] = -1;
            rate = Math.max(rate, flows.get(i).bytes() / (double) flows.get(i).idealFctNs());
        }
        double t =
                flows.stream().mapToLong(LabResults.FlowResult::startNs).min().orElse(0);
        while (true) {
            int active = 0;
            double nextStart = Double.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                long s = flows.get(i).startNs();
                if (s <= t && end[i] < 0) {
                    active++;
                } else if (s > t) {
                    nextStart = Math.min(nextStart, s);
                }
            }
            if (active == 0) {
                if (nextStart == Double.MAX_VALUE) {
                    break;
                }
                t = nextStart;
                continue;
            }
            double share = rate / active;
            double firstDone = Double.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                if (flows.get(i).startNs() <= t && end[i] < 0) {
                    firstDone = Math.min(firstDone, t + left[i] / share);
                }
            }
            double next = Math.min(firstDone, nextStart);
            for (int i = 0; i < n; i++) {
                if (flows.get(i).startNs() <= t && end[i] < 0) {
                    left[i] -= (next - t) * share;
                    if (left[i] <= 1e-6) {
                        end[i] = next;
                    }
                }
            }
            t = next;
        }
        double[] fct = new double[n];
        for (int i = 0; i < n; i++) {
            fct[i] = end[i] - flows.get(i).startNs();
        }
        return fct;
    }

    /** A loss-sweep run's recovery mode and loss rate, as its table and plot show them. */
    private record LossPoint(String recovery, String loss) {
        static LossPoint of(String label) {
            String recovery = "";
            String loss = "";
            for (String kv : label.split(" ")) {
                if (kv.startsWith("recovery=")) {
                    recovery = display(kv);
                } else if (kv.startsWith("loss=")) {
                    loss = percent(Double.parseDouble(kv.substring(5)));
                }
            }
            return new LossPoint(recovery, loss);
        }
    }

    static String lossTable(List<LabRunner.Outcome> outcomes) {
        Map<String, Map<String, LabResults>> byLoss = new LinkedHashMap<>();
        List<String> recoveries = new ArrayList<>();
        for (LabRunner.Outcome o : outcomes) {
            LossPoint point = LossPoint.of(o.label());
            if (!recoveries.contains(point.recovery())) {
                recoveries.add(point.recovery());
            }
            byLoss.computeIfAbsent(point.loss(), k -> new LinkedHashMap<>()).put(point.recovery(), o.results());
        }
        List<String> header = new ArrayList<>(List.of("random loss"));
        for (String rec : recoveries) {
            header.addAll(List.of(rec + " Gbit/s", "retransmitted", "timeouts", "spurious"));
        }
        List<List<String>> rows = new ArrayList<>();
        for (Map.Entry<String, Map<String, LabResults>> e : byLoss.entrySet()) {
            List<String> row = new ArrayList<>(List.of(e.getKey()));
            for (String rec : recoveries) {
                LabResults r = e.getValue().get(rec);
                if (r == null || r.perftests().isEmpty()) {
                    row.addAll(List.of("–", "–", "–", "–"));
                    continue;
                }
                LabResults.PerftestResult p = r.perftests().getFirst();
                String gbps =
                        fmt(p.gbps()) + (p.mismatchedBytes() != 0 ? " (" + p.mismatchedBytes() + " B wrong)" : "");
                row.addAll(List.of(
                        gbps,
                        Long.toString(r.counters().retransmittedPackets()),
                        Long.toString(r.counters().timeouts()),
                        Long.toString(r.counters().spuriousTimeouts())));
            }
            rows.add(row);
        }
        LabResults.PerftestResult p = outcomes.getFirst().results().perftests().getFirst();
        return "Source: " + source(outcomes) + ". RDMA WRITE bandwidth of " + p.iterations() + " × "
                + p.sizeBytes() / 1024 + " KiB, every byte verified, over one 100 Gbit/s link with random loss of"
                + " data packets.\n\n" + table(header, rows);
    }

    // ---- plots

    private static byte[] comparisonPlot(List<LabRunner.Outcome> outcomes, int percentile, String name) {
        return Plots.fctComparison(
                name + " FCT slowdown by flow size (16-host star, WebSearch)",
                byVariant(outcomes, LabResults::fctBuckets),
                percentile);
    }

    private static byte[] fatTreePlot(List<LabRunner.Outcome> outcomes, int percentile) {
        return Plots.fctComparison(
                "p" + percentile + " FCT slowdown by flow size (320-host fat tree, WebSearch 30%)",
                byVariant(outcomes, LabResults::fctBuckets),
                percentile);
    }

    /** What {@code pick} takes from each outcome's results, named by variant, in run order. */
    private static <T> Map<String, T> byVariant(List<LabRunner.Outcome> outcomes, Function<LabResults, T> pick) {
        Map<String, T> out = new LinkedHashMap<>();
        for (LabRunner.Outcome o : outcomes) {
            out.put(display(o.label()), pick.apply(o.results()));
        }
        return out;
    }

    private static byte[] lossPlot(List<LabRunner.Outcome> outcomes) {
        Map<String, Map<String, Double>> bySeries = new LinkedHashMap<>();
        for (LabRunner.Outcome o : outcomes) {
            if (!o.results().perftests().isEmpty()) {
                LossPoint point = LossPoint.of(o.label());
                bySeries.computeIfAbsent(point.recovery(), k -> new LinkedHashMap<>())
                        .put(point.loss(), o.results().perftests().getFirst().gbps());
            }
        }
        return Plots.bars(
                "RDMA WRITE over one lossy 100 Gbit/s link", "random loss of data packets", "Gbit/s", bySeries);
    }
}
