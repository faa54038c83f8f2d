package org.vrdma.harness.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Flow sizes drawn from a CDF follow it. */
class FlowSizeCdfTest {
    @Test
    void samplesFollowTheWebSearchCdf() {
        FlowSizeCdf cdf = FlowSizeCdf.named("websearch");
        int n = 200_000;
        long[] s = new long[n];
        SplittableRandom rng = new SplittableRandom(3);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            s[i] = cdf.sample(rng);
            sum += s[i];
        }
        Arrays.sort(s);
        // At every point of the table, the empirical CDF is within 0.5 percentage points of it.
        double[][] points = {
            {10_000, 15}, {50_000, 40}, {200_000, 60}, {1_000_000, 70}, {5_000_000, 90}, {10_000_000, 97}
        };
        for (double[] p : points) {
            double empirical = 100.0 * upperBound(s, (long) p[0]) / n;
            assertThat(empirical).as("P(size <= %.0f)", p[0]).isCloseTo(p[1], org.assertj.core.data.Offset.offset(0.5));
        }
        assertThat(s[n - 1]).isLessThanOrEqualTo(30_000_000L);
        // The mean of the piecewise-linear CDF, and the samples' mean within 2%.
        assertThat(cdf.meanBytes()).isCloseTo(1_711_250, org.assertj.core.data.Offset.offset(1.0));
        assertThat(sum / n).isCloseTo(cdf.meanBytes(), org.assertj.core.data.Percentage.withPercentage(2));
    }

    @Test
    void fbHadoopIsMostlySmallFlows() {
        FlowSizeCdf cdf = FlowSizeCdf.named("fbHadoop");
        assertThat(cdf.quantileBytes(50)).isEqualTo(700);
        assertThat(cdf.percentAt(1000)).isEqualTo(60.0);
        assertThat(cdf.maxBytes()).isEqualTo(10_000_000);
    }

    @Test
    void userCdfFilesAreReadAndChecked(@TempDir Path dir) throws Exception {
        Path ok = dir.resolve("mine.cdf");
        Files.writeString(ok, "# two sizes\n0 0\n1000 50\n3000 100\n");
        FlowSizeCdf cdf = FlowSizeCdf.named(ok.toString());
        assertThat(cdf.quantileBytes(25)).isEqualTo(500);
        assertThat(cdf.quantileBytes(75)).isEqualTo(2000);
        assertThat(cdf.meanBytes()).isEqualTo(0.5 * 500 + 0.5 * 2000);
        Path bad = dir.resolve("bad.cdf");
        Files.writeString(bad, "0 0\n1000 60\n900 100\n");
        assertThatThrownBy(() -> FlowSizeCdf.named(bad.toString())).hasMessageContaining("must increase");
        Files.writeString(bad, "0 0\n1000 90\n");
        assertThatThrownBy(() -> FlowSizeCdf.named(bad.toString())).hasMessageContaining("end at 100");
        // Other simulators' CDFs often end at 1 (fractions): the message says what to change.
        Files.writeString(bad, "0 0\n1000 0.5\n3000 1\n");
        assertThatThrownBy(() -> FlowSizeCdf.named(bad.toString())).hasMessageContaining("give percent, not fractions");
        // A CDF's points, as a lab carries them, give the same distribution as its file.
        FlowSizeCdf copy = FlowSizeCdf.of("mine.cdf", cdf.points());
        assertThat(copy.quantileBytes(75)).isEqualTo(2000);
        assertThat(copy.meanBytes()).isEqualTo(cdf.meanBytes());
        assertThatThrownBy(() -> FlowSizeCdf.named(dir.resolve("none").toString()))
                .hasMessageContaining("not websearch");
    }

    private static int upperBound(long[] sorted, long v) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
