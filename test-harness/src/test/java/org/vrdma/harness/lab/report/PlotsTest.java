package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.TickType;
import org.jfree.chart.axis.ValueTick;
import org.jfree.chart.ui.RectangleEdge;
import org.junit.jupiter.api.Test;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.stats.Percentiles;

/** FCT-by-size plots with few buckets tick and name the buckets, centred in the plot. */
class PlotsTest {
    private static final Rectangle2D AREA = new Rectangle2D.Double(50, 20, 800, 400);

    private static LabResults.SizeBucket bucket(long min, long max) {
        return new LabResults.SizeBucket(min, max, 4, 1.2, 1.5, 1.5, 9000);
    }

    private static Plots.BucketAxis axis(JFreeChart chart) {
        return (Plots.BucketAxis) chart.getXYPlot().getDomainAxis();
    }

    /** The ticks the axis draws, asked as drawing does. */
    @SuppressWarnings("unchecked")
    private static List<ValueTick> drawnTicks(Plots.BucketAxis axis) {
        Graphics2D g2 = new BufferedImage(900, 480, BufferedImage.TYPE_INT_RGB).createGraphics();
        try {
            return new ArrayList<>(axis.refreshTicks(g2, new AxisState(), AREA, RectangleEdge.BOTTOM));
        } finally {
            g2.dispose();
        }
    }

    @Test
    void aSingleBucketIsTickedAndNamedInTheMiddle() {
        JFreeChart chart = Plots.fctSlowdownChart("one size", List.of(bucket(10_000_000, Long.MAX_VALUE)));
        Plots.BucketAxis x = axis(chart);
        // Drawn at twice its lower bound, half a decade each side.
        assertThat(Math.sqrt(x.getLowerBound() * x.getUpperBound())).isCloseTo(2e7, within(1.0));
        List<ValueTick> ticks = drawnTicks(x);
        assertThat(ticks).hasSize(1);
        assertThat(ticks.getFirst().getValue()).isEqualTo(2e7);
        assertThat(ticks.getFirst().getText()).isEqualTo("> 10 MB");
        assertThat(x.valueToJava2D(2e7, AREA, RectangleEdge.BOTTOM)).isCloseTo(AREA.getCenterX(), within(1e-6));
        assertThat(Plots.fctSlowdown("one size", List.of(bucket(10_000_000, Long.MAX_VALUE))))
                .startsWith(0x89, 'P', 'N', 'G');
    }

    @Test
    void twoBucketsAreTickedAndNamedInsideTheAxis() {
        JFreeChart chart = Plots.fctSlowdownChart("two sizes", List.of(bucket(0, 10_000), bucket(30_000, 100_000)));
        Plots.BucketAxis x = axis(chart);
        List<ValueTick> ticks = drawnTicks(x);
        assertThat(ticks).extracting(ValueTick::getText).containsExactly("≤ 10 kB", "30 kB–100 kB");
        assertThat(ticks).extracting(ValueTick::getValue).containsExactly(1e4, 1e5);
        double left = x.valueToJava2D(1e4, AREA, RectangleEdge.BOTTOM) - AREA.getMinX();
        double right = AREA.getMaxX() - x.valueToJava2D(1e5, AREA, RectangleEdge.BOTTOM);
        // Symmetric and well inside: each point half a decade (of 1.95) from its edge.
        assertThat(left).isCloseTo(right, within(1e-6)).isGreaterThan(AREA.getWidth() / 5);
    }

    @Test
    void manyBucketsKeepDecadeTicks() {
        List<LabResults.SizeBucket> buckets = new ArrayList<>();
        long lower = 0;
        for (long upper : Percentiles.BUCKET_BOUNDS) {
            buckets.add(bucket(lower, upper));
            lower = upper;
        }
        Plots.BucketAxis x = axis(Plots.fctSlowdownChart("all sizes", buckets));
        assertThat(x.bucketTicks()).isEmpty();
        List<Double> majors = drawnTicks(x).stream()
                .filter(t -> t.getTickType() == TickType.MAJOR)
                .map(ValueTick::getValue)
                .toList();
        assertThat(majors).contains(1e4, 1e5, 1e6, 1e7);
    }

    @Test
    void comparisonOfVariantsWithOneSharedBucketTicksItOnce() {
        Map<String, List<LabResults.SizeBucket>> byVariant = new LinkedHashMap<>();
        byVariant.put("DCQCN", List.of(bucket(300_000, 1_000_000)));
        byVariant.put("HPCC", List.of(bucket(300_000, 1_000_000)));
        Plots.BucketAxis x = axis(Plots.fctComparisonChart("incast", byVariant, 99));
        assertThat(drawnTicks(x)).extracting(ValueTick::getText).containsExactly("300 kB–1 MB");
        assertThat(Math.sqrt(x.getLowerBound() * x.getUpperBound())).isCloseTo(1e6, within(1e-3));
    }

    @Test
    void sizeLabelsReadAsTheTables() {
        assertThat(Plots.sizeLabel(10_000)).isEqualTo("10 kB");
        assertThat(Plots.sizeLabel(2_500_000)).isEqualTo("2.5 MB");
        assertThat(Plots.sizeLabel(512)).isEqualTo("512 B");
        assertThat(Plots.bucketLabel(bucket(1_000_000, 3_000_000))).isEqualTo("1 MB–3 MB");
    }
}
