package org.vrdma.harness.ccsim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.vrdma.cc.ConfiguredAlgorithm;
import org.vrdma.cc.CongestionControls;
import org.vrdma.cc.switching.RedEcnMarker;

/**
 * Runs reference algorithms through the same two dumbbell experiments and renders a table: fairness
 * of two long flows (the second starts after the first) and an N:1 incast. {@code ./vrdma
 * cc-compare} drives it.
 */
public final class CcComparison {
    /** DCTCP runs with step marking at this queue length (K), the others with the RED of the shape. */
    public static final long DCTCP_STEP_BYTES = 60_000;

    /** Configuration of each algorithm in the experiments: the defaults unless tuned for a µs fabric. */
    public static final Map<String, String> ALGORITHMS = algorithms();

    private CcComparison() {}

    /**
     * Lengths and sizes of the two experiments.
     *
     * @param fairnessRunNs length of the two-flow run
     * @param secondFlowStartNs start of the second long flow
     * @param fairnessWindowNs fairness and goodput are measured over the last this-many ns of the run
     * @param incastSenders senders of the incast, all starting at 0
     * @param incastBytes bytes each incast sender sends
     * @param incastDeadlineNs the incast run stops here if not every flow has completed
     */
    public record Setup(
            long fairnessRunNs,
            long secondFlowStartNs,
            long fairnessWindowNs,
            int incastSenders,
            long incastBytes,
            long incastDeadlineNs) {
        /** The experiments of the module README: 10 ms, second flow at 1 ms, 8-10 ms; 16 x 1 MB. */
        public static final Setup DEFAULT = new Setup(10_000_000, 1_000_000, 2_000_000, 16, 1_000_000, 50_000_000);

        /** Validates the lengths: multiples of the sampling interval, window inside the run. */
        public Setup {
            requireSampleMultiple(fairnessRunNs, "fairnessRunNs");
            requireSampleMultiple(fairnessWindowNs, "fairnessWindowNs");
            if (fairnessWindowNs > fairnessRunNs) {
                throw new IllegalArgumentException(
                        "fairnessWindowNs must not exceed fairnessRunNs: " + fairnessWindowNs + " > " + fairnessRunNs);
            }
            if (secondFlowStartNs < 0 || secondFlowStartNs > fairnessRunNs - fairnessWindowNs) {
                throw new IllegalArgumentException(
                        "secondFlowStartNs must be in [0, start of the fairness window]: " + secondFlowStartNs);
            }
            if (incastSenders <= 0 || incastBytes <= 0 || incastDeadlineNs <= 0) {
                throw new IllegalArgumentException("incast senders, bytes and deadline must be positive");
            }
        }

        /** Start of the fairness window. */
        public long fairnessFromNs() {
            return fairnessRunNs - fairnessWindowNs;
        }

        private static void requireSampleMultiple(final long ns, final String name) {
            if (ns <= 0 || ns % Dumbbell.SAMPLE_NS != 0) {
                throw new IllegalArgumentException(
                        name + " must be a positive multiple of " + Dumbbell.SAMPLE_NS + " ns: " + ns);
            }
        }
    }

    /** Results of one algorithm. */
    public record Row(
            String algorithm,
            String config,
            double jain,
            double fairnessGbps,
            long fairnessQueueP99Bytes,
            long incastCompletionNs,
            long incastQueueP99Bytes,
            long incastMaxQueueBytes,
            long incastDrops,
            long incastRetransmittedBytes,
            long incastTimeouts,
            boolean incastAllDelivered) {}

    /** Runs both experiments of {@link Setup#DEFAULT} for algorithm {@code name} with its table config. */
    public static Row run(final String name, final long seed) {
        return run(name, ALGORITHMS.getOrDefault(name, ""), Setup.DEFAULT, seed);
    }

    /**
     * Runs both experiments for algorithm {@code name} configured from {@code configJson} (blank for
     * its defaults).
     *
     * @throws org.vrdma.cc.CcConfigException if the algorithm is unknown or the config invalid
     */
    public static Row run(final String name, final String configJson, final Setup setup, final long seed) {
        final ConfiguredAlgorithm algorithm = CongestionControls.defaults().configure(name, configJson);
        final DumbbellConfig shape = shape(name, seed);

        final Dumbbell fairness = new Dumbbell(shape);
        fairness.addFlow(algorithm, 0, Long.MAX_VALUE);
        fairness.addFlow(algorithm, setup.secondFlowStartNs(), Long.MAX_VALUE);
        fairness.runUntil(setup.fairnessFromNs());
        fairness.resetQueueStatistics();
        fairness.runUntil(setup.fairnessRunNs());

        final Dumbbell incast = new Dumbbell(shape);
        for (int i = 0; i < setup.incastSenders(); i++) {
            incast.addFlow(algorithm, 0, setup.incastBytes());
        }
        final boolean completed = incast.runUntilCompleted(setup.incastDeadlineNs());
        boolean allDelivered = completed;
        for (int i = 0; i < setup.incastSenders(); i++) {
            allDelivered &= incast.deliveredBytes(i) == setup.incastBytes();
        }
        return new Row(
                name,
                configJson == null ? "" : configJson.strip(),
                fairness.jainIndex(setup.fairnessFromNs(), setup.fairnessRunNs()),
                fairness.aggregateThroughputBps(setup.fairnessFromNs(), setup.fairnessRunNs()) / 1e9,
                fairness.queuePercentileBytes(99),
                completed ? incast.maxCompletionTimeNs() : -1,
                incast.queuePercentileBytes(99),
                incast.maxQueueBytes(),
                incast.drops(),
                incast.retransmittedBytes(),
                incast.timeouts(),
                allDelivered);
    }

    /** The dumbbell each algorithm runs on: DCTCP gets step marking, the others RED. */
    public static DumbbellConfig shape(final String name, final long seed) {
        final DumbbellConfig base = DumbbellConfig.hundredGig(seed);
        return "dctcp".equals(name) ? base.withMarker(RedEcnMarker.step(DCTCP_STEP_BYTES)) : base;
    }

    /** Runs every algorithm of {@link #ALGORITHMS} on {@link Setup#DEFAULT}. */
    public static List<Row> runAll(final long seed) {
        return runAll(ALGORITHMS, Setup.DEFAULT, seed);
    }

    /** Runs each algorithm of {@code algorithms} (name to JSON config) in order. */
    public static List<Row> runAll(final Map<String, String> algorithms, final Setup setup, final long seed) {
        final List<Row> rows = new ArrayList<>();
        for (final Map.Entry<String, String> e : algorithms.entrySet()) {
            rows.add(run(e.getKey(), e.getValue(), setup, seed));
        }
        return rows;
    }

    /** One line describing the dumbbell and the experiments. */
    public static String describe(final Setup setup, final long seed) {
        final DumbbellConfig shape = DumbbellConfig.hundredGig(seed);
        return String.format(
                Locale.ROOT,
                "Dumbbell at %d Gbit/s, base RTT %.2f µs, MTU %d B, buffer %d KB, RED %d-%d KB Pmax %.2f"
                        + " (DCTCP: step at %d KB), CNP interval %d µs, RTO %d µs doubling to %dx, seed %d."
                        + " Two long flows, the second from %s ms, measured over %s-%s ms; incast %dx%s.",
                shape.lineRateBps() / 1_000_000_000L,
                shape.baseRttNs() / 1e3,
                shape.mtuBytes(),
                shape.bufferBytes() / 1024,
                shape.marker().kMinBytes() / 1000,
                shape.marker().kMaxBytes() / 1000,
                shape.marker().pMax(),
                DCTCP_STEP_BYTES / 1000,
                shape.cnpIntervalNs() / 1000,
                shape.rtoNs() / 1000,
                1 << FlowSender.MAX_RTO_BACKOFF_SHIFT,
                seed,
                ms(setup.secondFlowStartNs()),
                ms(setup.fairnessFromNs()),
                ms(setup.fairnessRunNs()),
                setup.incastSenders(),
                bytes(setup.incastBytes()));
    }

    private static final String[] HEADER = {
        "algorithm",
        "config",
        "Jain (2 flows, %s-%s ms)",
        "goodput Gbit/s",
        "queue p99 KB",
        "incast %dx%s done µs",
        "incast queue p99 KB",
        "incast max queue KB",
        "drops",
        "retransmitted KB",
        "timeouts",
        "all delivered"
    };

    private static String[] header(final Setup setup) {
        final String[] h = HEADER.clone();
        h[2] = String.format(Locale.ROOT, h[2], ms(setup.fairnessFromNs()), ms(setup.fairnessRunNs()));
        h[5] = String.format(Locale.ROOT, h[5], setup.incastSenders(), bytes(setup.incastBytes()));
        return h;
    }

    private static String[] cells(final Row r, final boolean markdown) {
        final String config = r.config().isBlank() ? "defaults" : r.config();
        return new String[] {
            r.algorithm(),
            markdown ? "`" + config + "`" : config,
            String.format(Locale.ROOT, "%.3f", r.jain()),
            String.format(Locale.ROOT, "%.1f", r.fairnessGbps()),
            String.format(Locale.ROOT, "%.0f", r.fairnessQueueP99Bytes() / 1000.0),
            r.incastCompletionNs() < 0 ? "not done" : String.format(Locale.ROOT, "%.0f", r.incastCompletionNs() / 1e3),
            String.format(Locale.ROOT, "%.0f", r.incastQueueP99Bytes() / 1000.0),
            String.format(Locale.ROOT, "%.0f", r.incastMaxQueueBytes() / 1000.0),
            Long.toString(r.incastDrops()),
            String.format(Locale.ROOT, "%.0f", r.incastRetransmittedBytes() / 1000.0),
            Long.toString(r.incastTimeouts()),
            r.incastAllDelivered() ? "yes" : "no"
        };
    }

    /** Renders the rows as a Markdown table preceded by {@link #describe}. */
    public static String toMarkdown(final List<Row> rows, final Setup setup, final long seed) {
        final StringBuilder sb = new StringBuilder(describe(setup, seed)).append("\n\n");
        final String[] header = header(setup);
        sb.append("| ").append(String.join(" | ", header)).append(" |\n");
        sb.append("|").append("---|".repeat(header.length)).append('\n');
        for (final Row r : rows) {
            sb.append("| ").append(String.join(" | ", cells(r, true))).append(" |\n");
        }
        return sb.toString();
    }

    /** Renders the rows as a plain text table with aligned columns, preceded by {@link #describe}. */
    public static String toText(final List<Row> rows, final Setup setup, final long seed) {
        final List<String[]> lines = new ArrayList<>();
        lines.add(header(setup));
        for (final Row r : rows) {
            lines.add(cells(r, false));
        }
        final int[] widths = new int[HEADER.length];
        for (final String[] line : lines) {
            for (int i = 0; i < line.length; i++) {
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        final StringBuilder sb = new StringBuilder(describe(setup, seed)).append("\n\n");
        for (final String[] line : lines) {
            for (int i = 0; i < line.length; i++) {
                sb.append(i == 0 ? "" : "  ").append(line[i]);
                sb.append(" ".repeat(i == line.length - 1 ? 0 : widths[i] - line[i].length()));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String ms(final long ns) {
        return ns % 1_000_000 == 0
                ? Long.toString(ns / 1_000_000)
                : String.format(Locale.ROOT, "%.3f", ns / 1e6).replaceAll("0+$", "");
    }

    private static String bytes(final long n) {
        if (n % 1_000_000 == 0) {
            return n / 1_000_000 + " MB";
        }
        if (n % 1_000 == 0) {
            return n / 1_000 + " KB";
        }
        return n + " B";
    }

    private static Map<String, String> algorithms() {
        final Map<String, String> m = new LinkedHashMap<>();
        m.put("dcqcn", "");
        m.put("timely", "{\"tLowNs\": 10000, \"tHighNs\": 100000, \"minRttNs\": 5000, \"deltaBps\": 100000000}");
        m.put("swift", "");
        m.put("hpcc", "");
        m.put("dctcp", "");
        m.put("static", "");
        return Collections.unmodifiableMap(m);
    }
}
