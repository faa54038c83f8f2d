package org.vrdma.harness.lab;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * An empirical flow-size distribution: points (bytes, cumulative percent) with linear
 * interpolation between them, sampled by inverting the CDF. The built-in {@code websearch} and
 * {@code fbHadoop} distributions are resources with their citations; users give their own as a
 * file of {@code bytes percent} lines ({@code #} starts a comment), starting at percent 0 and
 * ending at 100, both columns strictly increasing after the first point.
 */
public final class FlowSizeCdf {
    private final String name;
    private final double[] bytes;
    private final double[] percent;

    FlowSizeCdf(String name, double[] bytes, double[] percent) {
        this.name = name;
        this.bytes = bytes;
        this.percent = percent;
    }

    /** Whether {@code name} is a built-in distribution rather than a file. */
    public static boolean isBuiltIn(String name) {
        return resource(name) != null;
    }

    private static String resource(String name) {
        return switch (name) {
            case "websearch", "webSearch", "WebSearch" -> "cdf/websearch.cdf";
            case "fbHadoop", "fb_hadoop", "FB_Hadoop" -> "cdf/fbHadoop.cdf";
            default -> null;
        };
    }

    /**
     * {@code websearch}, {@code fbHadoop}, or a file path.
     *
     * @throws IllegalArgumentException when the file is missing or not a CDF
     */
    public static FlowSizeCdf named(String nameOrPath) {
        String resource = resource(nameOrPath);
        try {
            if (resource != null) {
                try (InputStream in = FlowSizeCdf.class.getResourceAsStream(resource)) {
                    return parse(
                            resource.substring(4, resource.length() - 4),
                            new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
            }
            Path p = Path.of(nameOrPath);
            if (!Files.isRegularFile(p)) {
                throw new IllegalArgumentException("not websearch, fbHadoop or a readable CDF file: " + nameOrPath);
            }
            return parse(p.getFileName().toString(), Files.readString(p));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read CDF " + nameOrPath + ": " + e.getMessage(), e);
        }
    }

    /** Parses {@code bytes percent} lines. */
    public static FlowSizeCdf parse(String name, String text) {
        List<double[]> points = new ArrayList<>();
        String[] lines = text.split("\n");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            if (f.length != 2) {
                throw new IllegalArgumentException(name + " line " + (i + 1) + ": expected 'bytes percent': " + line);
            }
            try {
                points.add(new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1])});
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " line " + (i + 1) + ": not numbers: " + line, e);
            }
        }
        return of(name, points);
    }

    /**
     * A CDF from its points ({@code bytes, cumulative percent}), as {@link #points()} gives them:
     * how a lab carries a user's CDF, so a run replays without the file.
     */
    public static FlowSizeCdf of(String name, List<double[]> points) {
        if (points.size() < 2) {
            throw new IllegalArgumentException(name + ": needs at least two points");
        }
        for (int i = 0; i < points.size(); i++) {
            if (points.get(i) == null || points.get(i).length != 2) {
                throw new IllegalArgumentException(name + ": point " + (i + 1) + " is not [bytes, percent]");
            }
        }
        if (points.getFirst()[1] != 0 || points.getLast()[1] != 100) {
            // CDFs of other simulators often give fractions; say so rather than scale silently.
            String hint = points.getLast()[1] == 1 ? " (the last point is 1: give percent, not fractions)" : "";
            throw new IllegalArgumentException(name + ": percentages must start at 0 and end at 100" + hint);
        }
        double[] b = new double[points.size()];
        double[] p = new double[points.size()];
        for (int i = 0; i < b.length; i++) {
            b[i] = points.get(i)[0];
            p[i] = points.get(i)[1];
            if (b[i] < 0) {
                throw new IllegalArgumentException(name + ": negative size " + b[i]);
            }
            if (i > 0 && (b[i] <= b[i - 1] || p[i] <= p[i - 1])) {
                throw new IllegalArgumentException(
                        name + ": sizes and percentages must increase (point " + (i + 1) + ")");
            }
        }
        return new FlowSizeCdf(name, b, p);
    }

    public String name() {
        return name;
    }

    /** The points, {@code [bytes, cumulative percent]} each, as {@link #of} takes them. */
    public List<double[]> points() {
        List<double[]> out = new ArrayList<>(bytes.length);
        for (int i = 0; i < bytes.length; i++) {
            out.add(new double[] {bytes[i], percent[i]});
        }
        return out;
    }

    /** The size at cumulative percent {@code pct} in [0, 100], interpolated; at least 1 byte. */
    public long quantileBytes(double pct) {
        for (int i = 1; i < percent.length; i++) {
            if (pct <= percent[i]) {
                double x = bytes[i - 1]
                        + (bytes[i] - bytes[i - 1]) * (pct - percent[i - 1]) / (percent[i] - percent[i - 1]);
                return Math.max(1, Math.round(x));
            }
        }
        return Math.max(1, Math.round(bytes[bytes.length - 1]));
    }

    /** Cumulative percent of flows of at most {@code size} bytes, interpolated. */
    public double percentAt(double size) {
        if (size <= bytes[0]) {
            return 0;
        }
        for (int i = 1; i < bytes.length; i++) {
            if (size <= bytes[i]) {
                return percent[i - 1]
                        + (percent[i] - percent[i - 1]) * (size - bytes[i - 1]) / (bytes[i] - bytes[i - 1]);
            }
        }
        return 100;
    }

    /** A random size drawn from the distribution. */
    public long sample(RandomGenerator random) {
        return quantileBytes(random.nextDouble() * 100);
    }

    /** Mean flow size in bytes (exact for the piecewise-linear CDF). */
    public double meanBytes() {
        double s = 0;
        for (int i = 1; i < bytes.length; i++) {
            s += (bytes[i] + bytes[i - 1]) / 2 * (percent[i] - percent[i - 1]);
        }
        return s / 100;
    }

    public double maxBytes() {
        return bytes[bytes.length - 1];
    }
}
