package org.vrdma.harness.ccsim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.vrdma.cc.ConfiguredAlgorithm;
import org.vrdma.cc.CongestionControls;
import org.vrdma.cc.switching.RedEcnMarker;

/**
 * Runs every reference algorithm through the same two dumbbell experiments and renders a Markdown
 * table: fairness of two long flows (the second starts 1 ms after the first) and a 16:1 incast.
 */
public final class CcComparison {
    /** Experiment length of the fairness run. */
    public static final long FAIRNESS_RUN_NS = 10_000_000;

    /** Fairness is measured over the last 2 ms of the run. */
    public static final long FAIRNESS_FROM_NS = 8_000_000;

    /** Start of the second long flow. */
    public static final long SECOND_FLOW_START_NS = 1_000_000;

    /** Senders of the incast. */
    public static final int INCAST_SENDERS = 16;

    /** Bytes each incast sender sends. */
    public static final long INCAST_BYTES = 1_000_000;

    /** Upper bound of the incast run. */
    public static final long INCAST_DEADLINE_NS = 50_000_000;

    /** Configuration of each algorithm in the experiments: the defaults unless tuned for a µs fabric. */
    public static final Map<String, String> ALGORITHMS = algorithms();

    private CcComparison() {}

    /** Results of one algorithm. */
    public record Row(
            String algorithm,
            double jain,
            double fairnessGbps,
            long fairnessQueueP99Bytes,
            long incastCompletionNs,
            long incastQueueP99Bytes,
            long incastMaxQueueBytes,
            long incastDrops,
            long incastRetransmittedBytes,
            boolean incastAllDelivered) {}

    /** Runs both experiments for algorithm {@code name}. */
    public static Row run(final String name, final long seed) {
        final ConfiguredAlgorithm algorithm = CongestionControls.defaults().configure(name, ALGORITHMS.get(name));
        final DumbbellConfig shape = shape(name, seed);

        final Dumbbell fairness = new Dumbbell(shape);
        fairness.addFlow(algorithm, 0, Long.MAX_VALUE);
        fairness.addFlow(algorithm, SECOND_FLOW_START_NS, Long.MAX_VALUE);
        fairness.runUntil(FAIRNESS_FROM_NS);
        fairness.resetQueueStatistics();
        fairness.runUntil(FAIRNESS_RUN_NS);

        final Dumbbell incast = new Dumbbell(shape);
        for (int i = 0; i < INCAST_SENDERS; i++) {
            incast.addFlow(algorithm, 0, INCAST_BYTES);
        }
        final boolean completed = incast.runUntilCompleted(INCAST_DEADLINE_NS);
        boolean allDelivered = completed;
        for (int i = 0; i < INCAST_SENDERS; i++) {
            allDelivered &= incast.deliveredBytes(i) == INCAST_BYTES;
        }
        return new Row(
                name,
                fairness.jainIndex(FAIRNESS_FROM_NS, FAIRNESS_RUN_NS),
                fairness.aggregateThroughputBps(FAIRNESS_FROM_NS, FAIRNESS_RUN_NS) / 1e9,
                fairness.queuePercentileBytes(99),
                completed ? incast.maxCompletionTimeNs() : -1,
                incast.queuePercentileBytes(99),
                incast.maxQueueBytes(),
                incast.drops(),
                incast.retransmittedBytes(),
                allDelivered);
    }

    /** The dumbbell each algorithm runs on: DCTCP gets step marking, the others RED. */
    public static DumbbellConfig shape(final String name, final long seed) {
        final DumbbellConfig base = DumbbellConfig.hundredGig(seed);
        return "dctcp".equals(name) ? base.withMarker(RedEcnMarker.step(60_000)) : base;
    }

    /** Runs every algorithm. */
    public static List<Row> runAll(final long seed) {
        final List<Row> rows = new ArrayList<>();
        for (final String name : ALGORITHMS.keySet()) {
            rows.add(run(name, seed));
        }
        return rows;
    }

    /** Renders the rows as a Markdown table with a short legend. */
    public static String toMarkdown(final List<Row> rows, final long seed) {
        final DumbbellConfig shape = DumbbellConfig.hundredGig(seed);
        final StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "Dumbbell at %d Gbit/s, base RTT %.2f µs, MTU %d B, buffer %d KB, RED %d-%d KB Pmax %.2f"
                        + " (DCTCP: step at 60 KB), CNP interval %d µs, seed %d.%n%n",
                shape.lineRateBps() / 1_000_000_000L,
                shape.baseRttNs() / 1e3,
                shape.mtuBytes(),
                shape.bufferBytes() / 1024,
                shape.marker().kMinBytes() / 1000,
                shape.marker().kMaxBytes() / 1000,
                shape.marker().pMax(),
                shape.cnpIntervalNs() / 1000,
                seed));
        sb.append("| algorithm | config | Jain (2 flows, 8-10 ms) | goodput Gbit/s | queue p99 KB"
                + " | incast 16x1 MB done µs | incast queue p99 KB | incast max queue KB | drops"
                + " | retransmitted KB | all delivered |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (final Row r : rows) {
            final String config = ALGORITHMS.get(r.algorithm());
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | `%s` | %.3f | %.1f | %.0f | %s | %.0f | %.0f | %d | %.0f | %s |%n",
                    r.algorithm(),
                    config == null || config.isBlank() ? "defaults" : config,
                    r.jain(),
                    r.fairnessGbps(),
                    r.fairnessQueueP99Bytes() / 1000.0,
                    r.incastCompletionNs() < 0
                            ? "not done"
                            : String.format(Locale.ROOT, "%.0f", r.incastCompletionNs() / 1e3),
                    r.incastQueueP99Bytes() / 1000.0,
                    r.incastMaxQueueBytes() / 1000.0,
                    r.incastDrops(),
                    r.incastRetransmittedBytes() / 1000.0,
                    r.incastAllDelivered() ? "yes" : "no"));
        }
        return sb.toString();
    }

    /** Prints the comparison table for all algorithms; the optional argument is the seed. */
    public static void main(final String[] args) {
        final long seed = args.length > 0 ? Long.parseLong(args[0]) : 1;
        System.out.print(toMarkdown(runAll(seed), seed));
    }

    private static Map<String, String> algorithms() {
        final Map<String, String> m = new LinkedHashMap<>();
        m.put("dcqcn", "{\"raiBps\": 20000000, \"rhaiBps\": 200000000}");
        m.put("timely", "{\"tLowNs\": 10000, \"tHighNs\": 100000, \"minRttNs\": 5000, \"deltaBps\": 100000000}");
        m.put("swift", "");
        m.put("hpcc", "{\"raiBps\": 1000000000}");
        m.put("dctcp", "");
        m.put("static", "");
        return Map.copyOf(m).size() == m.size() ? java.util.Collections.unmodifiableMap(m) : m;
    }
}
