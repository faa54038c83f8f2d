package org.vrdma.harness.lab.stats;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.vrdma.harness.lab.LabResults;

/** Percentiles (nearest rank) and FCT-slowdown buckets by flow size. */
public final class Percentiles {
    /** Upper bounds of the flow-size buckets (bytes); the last bucket is everything larger. */
    public static final long[] BUCKET_BOUNDS = {
        10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, Long.MAX_VALUE
    };

    private Percentiles() {}

    /** Nearest-rank percentile of sorted values: the smallest value with at least p% at or below it. */
    public static double of(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /**
     * p50/p95/p99 of slowdown and of FCT per size bucket, over finished flows; empty buckets are left
     * out.
     */
    public static List<LabResults.SizeBucket> buckets(List<LabResults.FlowResult> flows) {
        List<LabResults.SizeBucket> out = new ArrayList<>();
        long lower = 0;
        for (long upper : BUCKET_BOUNDS) {
            List<LabResults.FlowResult> in = new ArrayList<>();
            for (LabResults.FlowResult f : flows) {
                if (f.fctNs() >= 0 && f.bytes() > lower && f.bytes() <= upper) {
                    in.add(f);
                }
            }
            if (!in.isEmpty()) {
                double[] s = new double[in.size()];
                double[] fctUs = new double[in.size()];
                double fctSum = 0;
                for (int i = 0; i < s.length; i++) {
                    s[i] = in.get(i).slowdown();
                    fctUs[i] = in.get(i).fctNs() / 1000.0;
                    fctSum += in.get(i).fctNs();
                }
                Arrays.sort(s);
                Arrays.sort(fctUs);
                out.add(new LabResults.SizeBucket(
                        lower,
                        upper,
                        s.length,
                        round(of(s, 50)),
                        round(of(s, 95)),
                        round(of(s, 99)),
                        round(fctSum / s.length / 1000),
                        round(of(fctUs, 50)),
                        round(of(fctUs, 95)),
                        round(of(fctUs, 99))));
            }
            lower = upper;
        }
        return out;
    }

    /** Rounded to 4 decimals so results print stably. */
    public static double round(double v) {
        return Math.round(v * 10_000) / 10_000.0;
    }
}
