package org.vrdma.harness.lab.report;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackend;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.harness.lab.SweepSpec;

/**
 * Runs a lab (every variant of its sweep) on a backend and writes results, CSV, plots and the
 * HTML report into a directory: one sub-directory per variant when the lab sweeps, plus {@code
 * report.html} covering all of them.
 */
public final class LabRunner {
    private final LabBackend backend;
    private final Path out;
    private final PrintStream console;
    private final boolean progressBar;
    private final boolean plots;

    public LabRunner(LabBackend backend, Path out, PrintStream console, boolean progressBar, boolean plots) {
        this.backend = backend;
        this.out = out;
        this.console = console;
        this.progressBar = progressBar;
        this.plots = plots;
    }

    /** One variant's outcome. */
    public record Outcome(String label, Path dir, LabResults results, double wallSeconds) {}

    public List<Outcome> run(Lab lab) {
        List<SweepSpec.Variant> variants = SweepSpec.expand(lab);
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < variants.size(); i++) {
            SweepSpec.Variant v = variants.get(i);
            Path dir = variants.size() == 1 ? out : out.resolve(slug(v.label()));
            console.printf("[%d/%d] %s%n", i + 1, variants.size(), v.label());
            long t0 = System.nanoTime();
            LabResults r;
            try (LabRun run = backend.start(v.lab())) {
                console.println("  " + run.describe());
                RunProgress progress = progressBar ? new ProgressBar(console) : RunProgress.NONE;
                r = run.run(progress);
                if (progress instanceof ProgressBar pb) {
                    pb.finish();
                }
            }
            double wall = (System.nanoTime() - t0) / 1e9;
            ResultsWriter.write(r, dir);
            if (plots) {
                writePlots(r, dir, v.label());
            }
            console.println("  " + summary(r, wall));
            outcomes.add(new Outcome(v.label(), dir, r, wall));
        }
        writeReport(lab, outcomes);
        return outcomes;
    }

    /** At most {@code max} unfinished flows, one line each with the reason, then how many more. */
    static List<String> unfinished(LabResults r, int max) {
        List<String> out = new ArrayList<>();
        int count = 0;
        for (LabResults.FlowResult f : r.flows()) {
            if (f.endNs() >= 0) {
                continue;
            }
            if (++count <= max) {
                out.add("flow " + f.id() + " " + f.src() + " -> " + f.dst() + ", " + f.bytes() + " B: "
                        + (f.unfinished() == null ? "reason unknown" : f.unfinished()));
            }
        }
        if (count > max) {
            out.add("... and " + (count - max) + " more (flows.csv lists every one)");
        }
        return out;
    }

    /** Whether the run's links were modelled, so link transmissions, ECN marks and drops were counted. */
    static boolean linksModelled(LabResults r) {
        return "virtual".equals(r.backend());
    }

    static String summary(LabResults r, double wallSeconds) {
        LabResults.Counters c = r.counters();
        StringBuilder sb = new StringBuilder(
                linksModelled(r)
                        ? String.format(
                                Locale.ROOT,
                                "%.3f ms of lab time in %.1f s: %d/%d flows finished, %d link transmissions, %d retransmitted, %d timeouts (%d spurious), %d CNPs, %d ECN marks, %d drops",
                                r.endNs() / 1e6,
                                wallSeconds,
                                c.flowsFinished(),
                                c.flowsStarted(),
                                c.linkTransmissions(),
                                c.retransmittedPackets(),
                                c.timeouts(),
                                c.spuriousTimeouts(),
                                c.cnpsSent(),
                                c.ecnMarks(),
                                c.bufferDrops() + c.injectedLosses())
                        // Zeros for what the machine's own links do not report would read as measured.
                        : String.format(
                                Locale.ROOT,
                                "%.3f ms of lab time in %.1f s: %d/%d flows finished, %d retransmitted, %d timeouts (%d spurious), %d CNPs"
                                        + " (link transmissions, ECN marks and drops not observable on real links)",
                                r.endNs() / 1e6,
                                wallSeconds,
                                c.flowsFinished(),
                                c.flowsStarted(),
                                c.retransmittedPackets(),
                                c.timeouts(),
                                c.spuriousTimeouts(),
                                c.cnpsSent()));
        if (r.pfc() != null) {
            LabResults.Pfc p = r.pfc();
            sb.append(String.format(
                    Locale.ROOT,
                    "; PFC: %d PAUSE frames, %d link directions paused (%d hosts' NICs), %.3f ms paused in all, %d packets held behind pauses, %d lossless drops",
                    p.pauseFramesSent(),
                    p.linksPaused(),
                    p.hostNicsPaused(),
                    p.pausedNs() / 1e6,
                    p.pauseDelayedPackets(),
                    p.losslessDrops()));
        }
        if (r.notes() != null) {
            for (String n : r.notes()) {
                sb.append(System.lineSeparator()).append("  note: ").append(n);
            }
        }
        for (String u : unfinished(r, 5)) {
            sb.append(System.lineSeparator()).append("  unfinished: ").append(u);
        }
        for (LabResults.PerftestResult p : r.perftests()) {
            // A bandwidth test measures no latency and a latency test no rate: print what was measured.
            String measured = p.test().endsWith("Lat")
                    ? String.format(Locale.ROOT, "p50 %.3f us, p99 %.3f us", p.latencyP50Us(), p.latencyP99Us())
                    : String.format(Locale.ROOT, "%.2f Gbit/s, %.0f msg/s", p.gbps(), p.messagesPerSecond());
            sb.append(String.format(
                    Locale.ROOT,
                    "%n  %s %s->%s %d B x %d: %s, %d bytes verified, %d mismatched",
                    p.test(),
                    p.client(),
                    p.server(),
                    p.sizeBytes(),
                    p.iterations(),
                    measured,
                    p.verifiedBytes(),
                    p.mismatchedBytes()));
        }
        return sb.toString();
    }

    private void writePlots(LabResults r, Path dir, String label) {
        try {
            if (!r.fctBuckets().isEmpty()) {
                Files.write(
                        dir.resolve("fct-slowdown.png"),
                        Plots.fctSlowdown("FCT slowdown by flow size: " + label, r.fctBuckets()));
            }
            Files.write(
                    dir.resolve("throughput.png"),
                    Plots.timeSeries("Throughput received: " + label, r.throughput(), 17));
            Files.write(dir.resolve("queues.png"), Plots.timeSeries("Busiest queues: " + label, r.queues(), 8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeReport(Lab lab, List<Outcome> outcomes) {
        HtmlReport html = new HtmlReport("Lab " + lab.name());
        if (lab.description() != null) {
            html.paragraph(lab.description());
        }
        html.paragraph("Backend " + backend.name() + ", seed " + lab.seed() + ". Replay any variant exactly with "
                + "./vrdma lab run <variant>/results.json.");
        if (outcomes.size() > 1) {
            Map<String, List<LabResults.SizeBucket>> byVariant = new LinkedHashMap<>();
            List<List<String>> rows = new ArrayList<>();
            for (Outcome o : outcomes) {
                byVariant.put(o.label(), o.results().fctBuckets());
                LabResults.Counters c = o.results().counters();
                double[] all = overall(o.results());
                rows.add(List.of(
                        o.label(),
                        c.flowsFinished() + "/" + c.flowsStarted(),
                        HtmlReport.fmt(all[0]),
                        HtmlReport.fmt(all[1]),
                        HtmlReport.fmt(all[2]),
                        Long.toString(c.retransmittedPackets()),
                        Long.toString(c.cnpsSent()),
                        Long.toString(c.bufferDrops() + c.injectedLosses())));
            }
            html.heading("Comparison");
            html.table(
                    List.of("variant", "flows done", "p50 slowdown", "p95", "p99", "retransmitted", "CNPs", "drops"),
                    rows);
            if (plots && byVariant.values().stream().anyMatch(b -> !b.isEmpty())) {
                byte[] p99 = Plots.fctComparison("p99 FCT slowdown by flow size", byVariant, 99);
                byte[] p50 = Plots.fctComparison("p50 FCT slowdown by flow size", byVariant, 50);
                html.image("p99 FCT slowdown", p99).image("p50 FCT slowdown", p50);
                try {
                    Files.createDirectories(out);
                    Files.write(out.resolve("fct-p99-comparison.png"), p99);
                    Files.write(out.resolve("fct-p50-comparison.png"), p50);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        for (Outcome o : outcomes) {
            LabResults r = o.results();
            html.heading(o.label());
            html.code("./vrdma lab run " + o.dir().resolve("results.json"));
            if (r.notes() != null) {
                for (String n : r.notes()) {
                    html.paragraph(n);
                }
            }
            html.counters(r.counters(), linksModelled(r));
            if (r.pfc() != null) {
                LabResults.Pfc p = r.pfc();
                html.paragraph(String.format(
                        Locale.ROOT,
                        "Priority flow control: %d PAUSE frames and %d resumes sent, %d link directions paused"
                                + " (%d hosts' NICs, %.3f ms), %.3f ms paused in all, %d packets held behind"
                                + " pauses, largest ingress charge %d bytes, %d lossless drops (pfc.csv: per link).",
                        p.pauseFramesSent(),
                        p.resumeFramesSent(),
                        p.linksPaused(),
                        p.hostNicsPaused(),
                        p.hostNicPausedNs() / 1e6,
                        p.pausedNs() / 1e6,
                        p.pauseDelayedPackets(),
                        p.maxIngressBytes(),
                        p.losslessDrops()));
            }
            List<String> unfinished = unfinished(r, 50);
            if (!unfinished.isEmpty()) {
                html.paragraph("Unfinished flows ("
                        + (r.counters().flowsStarted() - r.counters().flowsFinished()) + "), with the reason:");
                html.code(String.join("\n", unfinished));
            }
            if (!r.fctBuckets().isEmpty()) {
                html.buckets(r.fctBuckets());
            }
            if (!r.perftests().isEmpty()) {
                html.table(
                        List.of(
                                "test",
                                "client",
                                "server",
                                "size",
                                "iterations",
                                "Gbit/s",
                                "msg/s",
                                "p50 us",
                                "p99 us",
                                "verified B",
                                "mismatched"),
                        r.perftests().stream()
                                .map(p -> List.of(
                                        p.test(),
                                        p.client(),
                                        p.server(),
                                        Integer.toString(p.sizeBytes()),
                                        Long.toString(p.iterations()),
                                        HtmlReport.fmt(p.gbps()),
                                        HtmlReport.fmt(p.messagesPerSecond()),
                                        HtmlReport.fmt(p.latencyP50Us()),
                                        HtmlReport.fmt(p.latencyP99Us()),
                                        Long.toString(p.verifiedBytes()),
                                        Long.toString(p.mismatchedBytes())))
                                .toList());
            }
            if (plots) {
                if (!r.fctBuckets().isEmpty()) {
                    html.image("FCT slowdown", Plots.fctSlowdown("FCT slowdown by flow size", r.fctBuckets()));
                }
                html.image("throughput", Plots.timeSeries("Throughput received", r.throughput(), 17));
                html.image("queues", Plots.timeSeries("Busiest queues", r.queues(), 8));
            }
        }
        try {
            Files.createDirectories(out);
            Files.writeString(out.resolve("report.html"), html.render());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** p50/p95/p99 slowdown over all finished flows. */
    static double[] overall(LabResults r) {
        double[] s = r.flows().stream()
                .filter(f -> f.fctNs() >= 0)
                .mapToDouble(LabResults.FlowResult::slowdown)
                .sorted()
                .toArray();
        return new double[] {
            org.vrdma.harness.lab.stats.Percentiles.of(s, 50),
            org.vrdma.harness.lab.stats.Percentiles.of(s, 95),
            org.vrdma.harness.lab.stats.Percentiles.of(s, 99)
        };
    }

    static String slug(String label) {
        String s = label.replaceAll("[^A-Za-z0-9.=-]+", "_");
        return s.isEmpty() ? "run" : s;
    }
}
