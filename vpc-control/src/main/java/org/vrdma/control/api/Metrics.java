package org.vrdma.control.api;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.vrdma.control.store.ResourceStore;

/**
 * The controller's metrics in the Prometheus text exposition format (version 0.0.4): request
 * counts by method, route and status; store operation latency histograms; and gauges read at
 * scrape time (resource counts, store revision, published hosts).
 */
public final class Metrics implements ResourceStore.LatencyListener {
    /** Histogram bucket upper bounds, seconds. */
    static final double[] BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};

    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
    private final Map<String, Histogram> store = new ConcurrentHashMap<>();
    private final Map<String, Supplier<Map<String, Number>>> gauges = new ConcurrentHashMap<>();
    private final Map<String, String> gaugeHelp = new ConcurrentHashMap<>();

    public void request(String method, String route, int status) {
        requests.computeIfAbsent(
                        "method=\"" + method + "\",route=\"" + escape(route) + "\",status=\"" + status + "\"",
                        k -> new LongAdder())
                .increment();
    }

    @Override
    public void observe(String operation, double seconds) {
        store.computeIfAbsent(operation, k -> new Histogram()).observe(seconds);
    }

    /**
     * A gauge family read at scrape time: the supplier maps a label set (such as {@code
     * kind="vpc"}, or "" for none) to a value.
     */
    public void gauge(String name, String help, Supplier<Map<String, Number>> values) {
        gauges.put(name, values);
        gaugeHelp.put(name, help);
    }

    public String render() {
        StringBuilder out = new StringBuilder();
        out.append("# HELP vrdma_control_http_requests_total HTTP requests served, by method, route and status.\n");
        out.append("# TYPE vrdma_control_http_requests_total counter\n");
        new TreeMap<>(requests)
                .forEach((labels, n) -> out.append("vrdma_control_http_requests_total{")
                        .append(labels)
                        .append("} ")
                        .append(n.sum())
                        .append('\n'));
        out.append(
                "# HELP vrdma_control_store_operation_seconds Latency of store transactions (a write is durable when it ends).\n");
        out.append("# TYPE vrdma_control_store_operation_seconds histogram\n");
        new TreeMap<>(store).forEach((op, h) -> h.render(out, "vrdma_control_store_operation_seconds", op));
        new TreeMap<>(gauges).forEach((name, supplier) -> {
            out.append("# HELP ")
                    .append(name)
                    .append(' ')
                    .append(gaugeHelp.get(name))
                    .append('\n');
            out.append("# TYPE ").append(name).append(" gauge\n");
            supplier.get().forEach((labels, v) -> {
                out.append(name);
                if (!labels.isEmpty()) {
                    out.append('{').append(labels).append('}');
                }
                out.append(' ').append(v).append('\n');
            });
        });
        return out.toString();
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static final class Histogram {
        final LongAdder[] counts = new LongAdder[BUCKETS.length];
        final LongAdder count = new LongAdder();
        final DoubleAdder sum = new DoubleAdder();

        Histogram() {
            for (int i = 0; i < counts.length; i++) {
                counts[i] = new LongAdder();
            }
        }

        void observe(double seconds) {
            for (int i = 0; i < BUCKETS.length; i++) {
                if (seconds <= BUCKETS[i]) {
                    counts[i].increment();
                    break;
                }
            }
            count.increment();
            sum.add(seconds);
        }

        void render(StringBuilder out, String name, String op) {
            long cumulative = 0;
            for (int i = 0; i < BUCKETS.length; i++) {
                cumulative += counts[i].sum();
                out.append(name)
                        .append("_bucket{operation=\"")
                        .append(op)
                        .append("\",le=\"")
                        .append(BUCKETS[i])
                        .append("\"} ")
                        .append(cumulative)
                        .append('\n');
            }
            out.append(name)
                    .append("_bucket{operation=\"")
                    .append(op)
                    .append("\",le=\"+Inf\"} ")
                    .append(count.sum())
                    .append('\n');
            out.append(name)
                    .append("_sum{operation=\"")
                    .append(op)
                    .append("\"} ")
                    .append(sum.sum())
                    .append('\n');
            out.append(name)
                    .append("_count{operation=\"")
                    .append(op)
                    .append("\"} ")
                    .append(count.sum())
                    .append('\n');
        }
    }
}
