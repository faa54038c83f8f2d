package org.vrdma.harness.lab.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.vrdma.harness.lab.LabResults;

/** PNG charts of lab results with JFreeChart, drawn headless. */
public final class Plots {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 480;
    private static final Color[] COLORS = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
        new Color(0xbcbd22), new Color(0x17becf)
    };

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Plots() {}

    /** FCT slowdown p50/p95/p99 against flow size (bucket upper bound, log scale). */
    public static byte[] fctSlowdown(String title, List<LabResults.SizeBucket> buckets) {
        return png(fctSlowdownChart(title, buckets));
    }

    static JFreeChart fctSlowdownChart(String title, List<LabResults.SizeBucket> buckets) {
        XYSeriesCollection ds = new XYSeriesCollection();
        XYSeries p50 = new XYSeries("p50");
        XYSeries p95 = new XYSeries("p95");
        XYSeries p99 = new XYSeries("p99");
        for (LabResults.SizeBucket b : buckets) {
            double x = bucketX(b);
            p50.add(x, b.p50());
            p95.add(x, b.p95());
            p99.add(x, b.p99());
        }
        ds.addSeries(p50);
        ds.addSeries(p95);
        ds.addSeries(p99);
        return sizeChart(title, "FCT slowdown", ds, buckets);
    }

    /** One line per variant: a percentile of FCT slowdown against flow size. */
    public static byte[] fctComparison(
            String title, Map<String, List<LabResults.SizeBucket>> byVariant, int percentile) {
        return png(fctComparisonChart(title, byVariant, percentile));
    }

    static JFreeChart fctComparisonChart(
            String title, Map<String, List<LabResults.SizeBucket>> byVariant, int percentile) {
        XYSeriesCollection ds = new XYSeriesCollection();
        List<LabResults.SizeBucket> all = new ArrayList<>();
        for (Map.Entry<String, List<LabResults.SizeBucket>> e : byVariant.entrySet()) {
            XYSeries s = new XYSeries(e.getKey());
            for (LabResults.SizeBucket b : e.getValue()) {
                s.add(bucketX(b), percentile == 50 ? b.p50() : percentile == 95 ? b.p95() : b.p99());
                all.add(b);
            }
            ds.addSeries(s);
        }
        return sizeChart(title, "p" + percentile + " FCT slowdown", ds, all);
    }

    /** A time series (throughput, queue depth) against time in µs. */
    public static byte[] timeSeries(String title, LabResults.TimeSeries ts, int maxSeries) {
        XYSeriesCollection ds = new XYSeriesCollection();
        int k = 0;
        for (LabResults.Series s : ts.series()) {
            if (k++ >= maxSeries) {
                break;
            }
            XYSeries xy = new XYSeries(s.name());
            double[] v = s.values();
            for (int i = 0; i < v.length; i++) {
                xy.add((i + 1) * ts.intervalNs() / 1000.0, v[i]);
            }
            ds.addSeries(xy);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(
                title, "time [us]", ts.unit(), ds, PlotOrientation.VERTICAL, true, false, false);
        style(chart, false);
        return png(chart);
    }

    /**
     * The first series of each named time series on one chart (e.g. one lab variant each), up to
     * {@code maxUs} of time.
     */
    public static byte[] overlay(String title, String yLabel, Map<String, LabResults.TimeSeries> byName, long maxUs) {
        XYSeriesCollection ds = new XYSeriesCollection();
        for (Map.Entry<String, LabResults.TimeSeries> e : byName.entrySet()) {
            XYSeries xy = new XYSeries(e.getKey());
            LabResults.TimeSeries ts = e.getValue();
            if (!ts.series().isEmpty()) {
                double[] v = ts.series().getFirst().values();
                for (int i = 0; i < v.length; i++) {
                    double us = (i + 1) * ts.intervalNs() / 1000.0;
                    if (us > maxUs) {
                        break;
                    }
                    xy.add(us, v[i]);
                }
            }
            ds.addSeries(xy);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(
                title, "time [us]", yLabel, ds, PlotOrientation.VERTICAL, true, false, false);
        style(chart, false);
        return png(chart);
    }

    /** Grouped bars: one group per category (in order), one bar per series. */
    public static byte[] bars(String title, String xLabel, String yLabel, Map<String, Map<String, Double>> bySeries) {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        bySeries.forEach((series, values) -> values.forEach((category, v) -> ds.addValue(v, series, category)));
        JFreeChart chart =
                ChartFactory.createBarChart(title, xLabel, yLabel, ds, PlotOrientation.VERTICAL, true, false, false);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        BarRenderer r = (BarRenderer) plot.getRenderer();
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        for (int i = 0; i < ds.getRowCount(); i++) {
            r.setSeriesPaint(i, COLORS[i % COLORS.length]);
        }
        chart.setBackgroundPaint(Color.WHITE);
        return png(chart);
    }

    private static double bucketX(LabResults.SizeBucket b) {
        // Infinite upper bound: plot at twice the lower bound.
        return b.maxBytes() == Long.MAX_VALUE ? Math.max(1, b.minBytes()) * 2.0 : b.maxBytes();
    }

    private static JFreeChart sizeChart(
            String title, String yLabel, XYSeriesCollection ds, List<LabResults.SizeBucket> buckets) {
        JFreeChart chart = ChartFactory.createXYLineChart(
                title, "flow size [bytes]", yLabel, ds, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        // Where the buckets drawn are one or two, decade ticks would show at most one bare power of
        // ten off the points (or none): tick and name the buckets themselves instead.
        TreeMap<Double, String> byX = new TreeMap<>();
        for (LabResults.SizeBucket b : buckets) {
            byX.putIfAbsent(bucketX(b), bucketLabel(b));
        }
        BucketAxis x = new BucketAxis("flow size [bytes], bucket upper bound", byX.size() <= 2 ? byX : Map.of());
        x.setBase(10);
        x.setSmallestValue(1000);
        // A fixed range half a decade around the buckets: JFreeChart's auto range fails on a
        // single bucket (all flows of one size) with a zero-length range. Symmetric in log scale,
        // so one bucket sits in the middle.
        if (!byX.isEmpty()) {
            x.setAutoRange(false);
            x.setRange(Math.max(1, byX.firstKey() / 3), byX.lastKey() * 3);
            x.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1)); // one tick per decade
        }
        plot.setDomainAxis(x);
        style(chart, true);
        return chart;
    }

    /** A bucket as the tables name it: {@code ≤ 10 kB}, {@code 30 kB–100 kB}, {@code > 10 MB}. */
    static String bucketLabel(LabResults.SizeBucket b) {
        if (b.maxBytes() == Long.MAX_VALUE) {
            return "> " + sizeLabel(b.minBytes());
        }
        return b.minBytes() <= 0
                ? "≤ " + sizeLabel(b.maxBytes())
                : sizeLabel(b.minBytes()) + "–" + sizeLabel(b.maxBytes());
    }

    /** Bytes in kB or MB (powers of 1000, as the buckets are), at most three significant digits. */
    static String sizeLabel(long bytes) {
        if (bytes >= 1_000_000) {
            return trim(bytes / 1e6) + " MB";
        }
        return bytes >= 1000 ? trim(bytes / 1e3) + " kB" : bytes + " B";
    }

    private static String trim(double v) {
        return new java.math.BigDecimal(v)
                .round(new java.math.MathContext(3))
                .stripTrailingZeros()
                .toPlainString();
    }

    /**
     * A log axis of flow sizes; given bucket positions, its ticks are those, labelled with the
     * buckets, in place of decades.
     */
    static final class BucketAxis extends LogAxis {
        private final List<NumberTick> bucketTicks = new ArrayList<>();

        BucketAxis(String label, Map<Double, String> bucketsByX) {
            super(label);
            bucketsByX.forEach((x, name) ->
                    bucketTicks.add(new NumberTick(x, name, TextAnchor.TOP_CENTER, TextAnchor.CENTER, 0.0)));
        }

        /** The bucket ticks, empty when the axis ticks decades. */
        List<NumberTick> bucketTicks() {
            return List.copyOf(bucketTicks);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public List refreshTicks(Graphics2D g2, AxisState state, Rectangle2D dataArea, RectangleEdge edge) {
            if (bucketTicks.isEmpty()) {
                return super.refreshTicks(g2, state, dataArea, edge);
            }
            return new ArrayList<>(bucketTicks);
        }
    }

    private static void style(JFreeChart chart, boolean shapes) {
        XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, shapes);
        for (int i = 0; i < plot.getDataset().getSeriesCount(); i++) {
            r.setSeriesPaint(i, COLORS[i % COLORS.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(r);
        chart.setBackgroundPaint(Color.WHITE);
    }

    private static byte[] png(JFreeChart chart) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ChartUtils.writeChartAsPNG(out, chart, WIDTH, HEIGHT);
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
