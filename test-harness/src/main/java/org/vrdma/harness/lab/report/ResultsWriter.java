package org.vrdma.harness.lab.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;

/**
 * Writes a run's results: {@code results.json} (everything, with the lab and seed, so {@code
 * ./vrdma lab run results.json} replays it), {@code lab.json} (the lab with its seed, which
 * replays it too), and CSV files for spreadsheets and scripts: {@code
 * flows.csv}, {@code fct.csv} (slowdown percentiles by size), {@code throughput.csv}, {@code
 * queues.csv}, {@code counters.csv} (the run's totals), and with priority flow control {@code pfc.csv} (per link direction that paused).
 */
public final class ResultsWriter {
    private ResultsWriter() {}

    /** The results as JSON text; identical for identical results. */
    public static String json(LabResults r) {
        try {
            return LabLoader.json().writeValueAsString(r) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void write(LabResults r, Path dir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("results.json"), json(r));
            // The lab beside the CSV files, seed included: ./vrdma lab run lab.json replays them too.
            Files.writeString(dir.resolve("lab.json"), LabLoader.toJson(r.lab()) + "\n");
            StringBuilder flows = new StringBuilder(
                    "id,workload,src,dst,bytes,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,cc,unfinished\n");
            for (LabResults.FlowResult f : r.flows()) {
                flows.append(f.id())
                        .append(',')
                        .append(f.workload())
                        .append(',')
                        .append(f.src())
                        .append(',')
                        .append(f.dst())
                        .append(',')
                        .append(f.bytes())
                        .append(',')
                        .append(f.startNs())
                        .append(',')
                        .append(f.endNs())
                        .append(',')
                        .append(f.fctNs())
                        .append(',')
                        .append(f.idealFctNs())
                        .append(',')
                        .append(num(f.slowdown()))
                        .append(',')
                        .append(f.cc())
                        .append(',')
                        .append(
                                f.unfinished() == null
                                        ? ""
                                        : '"' + f.unfinished().replace("\"", "'") + '"')
                        .append('\n');
            }
            Files.writeString(dir.resolve("flows.csv"), flows);
            StringBuilder fct = new StringBuilder("min_bytes,max_bytes,flows,p50_slowdown,p95_slowdown,p99_slowdown,"
                    + "mean_fct_us,p50_fct_us,p95_fct_us,p99_fct_us\n");
            for (LabResults.SizeBucket b : r.fctBuckets()) {
                fct.append(b.minBytes())
                        .append(',')
                        .append(b.maxBytes() == Long.MAX_VALUE ? "inf" : b.maxBytes())
                        .append(',')
                        .append(b.flows())
                        .append(',')
                        .append(num(b.p50()))
                        .append(',')
                        .append(num(b.p95()))
                        .append(',')
                        .append(num(b.p99()))
                        .append(',')
                        .append(num(b.meanFctUs()))
                        .append(',')
                        .append(num(b.p50FctUs()))
                        .append(',')
                        .append(num(b.p95FctUs()))
                        .append(',')
                        .append(num(b.p99FctUs()))
                        .append('\n');
            }
            Files.writeString(dir.resolve("fct.csv"), fct);
            Files.writeString(dir.resolve("counters.csv"), counters(r.counters()));
            Files.writeString(dir.resolve("throughput.csv"), series(r.throughput()));
            Files.writeString(dir.resolve("queues.csv"), series(r.queues()));
            if (r.pfc() != null) {
                Files.writeString(dir.resolve("pfc.csv"), pfc(r.pfc()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write results to " + dir, e);
        }
    }

    /** The run's totals, one {@code counter,value} line each, in the order of {@link LabResults.Counters}. */
    static String counters(LabResults.Counters c) {
        StringBuilder sb = new StringBuilder("counter,value\n");
        for (RecordComponent rc : LabResults.Counters.class.getRecordComponents()) {
            Object v;
            try {
                v = rc.getAccessor().invoke(c);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            // snake_case as the other CSV headers: spuriousTimeouts -> spurious_timeouts
            sb.append(rc.getName().replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT))
                    .append(',')
                    .append(v)
                    .append('\n');
        }
        return sb.toString();
    }

    /** Per link direction under PFC: the sender's pauses and the receiving switch's ingress accounting. */
    private static String pfc(LabResults.Pfc p) {
        StringBuilder sb = new StringBuilder(
                "link,pauses_received,paused_ns,pause_delayed_packets,xoff_sent,xon_sent,max_ingress_bytes,headroom_drops\n");
        for (LabResults.PfcLink l : p.links()) {
            sb.append(l.link())
                    .append(',')
                    .append(l.pausesReceived())
                    .append(',')
                    .append(l.pausedNs())
                    .append(',')
                    .append(l.pauseDelayedPackets())
                    .append(',')
                    .append(l.xoffSent())
                    .append(',')
                    .append(l.xonSent())
                    .append(',')
                    .append(l.maxIngressBytes())
                    .append(',')
                    .append(l.headroomDrops())
                    .append('\n');
        }
        return sb.toString();
    }

    private static String series(LabResults.TimeSeries ts) {
        StringBuilder sb = new StringBuilder("time_us");
        int n = 0;
        for (LabResults.Series s : ts.series()) {
            sb.append(',').append('"').append(s.name().replace("\"", "'")).append('"');
            n = Math.max(n, s.values().length);
        }
        sb.append('\n');
        for (int i = 0; i < n; i++) {
            sb.append(num((i + 1) * ts.intervalNs() / 1000.0));
            for (LabResults.Series s : ts.series()) {
                sb.append(',').append(i < s.values().length ? num(s.values()[i]) : "");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    static String num(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
