package org.vrdma.harness.lab.report;

import java.io.PrintStream;
import java.util.Locale;
import org.vrdma.harness.lab.RunProgress;

/**
 * A one-line progress bar redrawn at most five times a second. Over lab time the bar and the ETA
 * cover the workload's run time only, {@code [#########...........]  45%  4.50/10.00 ms  1234/2500
 * flows  ETA 12 s}; the drain after it ends as soon as the network is idle, so it has no ETA and
 * shows what is still in flight, {@code [####...####] drain  0.85/50.00 ms  2480/2500 flows  20 in
 * flight}. Counted steps show {@code [###.......]  40%  test 2/5  ETA 30 s}.
 */
final class ProgressBar implements RunProgress {
    private static final int WIDTH = 30;
    private final PrintStream out;
    private final long startWallNs = System.nanoTime();
    private long lastDrawNs;
    private boolean drawn;

    ProgressBar(PrintStream out) {
        this.out = out;
    }

    @Override
    public void onTime(long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted) {
        long now = System.nanoTime();
        if (throttled(now, doneNs < runNs + drainNs)) {
            return;
        }
        draw(timeLine(doneNs, runNs, drainNs, flowsDone, flowsStarted, elapsedSeconds(now)));
    }

    @Override
    public void onSteps(String unit, long done, long total) {
        long now = System.nanoTime();
        if (throttled(now, done < total)) {
            return;
        }
        draw(stepLine(unit, done, total, elapsedSeconds(now)));
    }

    private boolean throttled(long nowNs, boolean unfinished) {
        if (nowNs - lastDrawNs < 200_000_000L && unfinished) {
            return true;
        }
        lastDrawNs = nowNs;
        return false;
    }

    private double elapsedSeconds(long nowNs) {
        return (nowNs - startWallNs) / 1e9;
    }

    private void draw(String line) {
        out.print("\r" + line);
        out.flush();
        drawn = true;
    }

    static String timeLine(
            long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted, double elapsedSeconds) {
        String flows = flowsDone < 0 ? flowsStarted + " flows planned" : flowsDone + "/" + flowsStarted + " flows";
        if (doneNs < runNs || drainNs == 0) {
            double f = runNs == 0 ? 1 : Math.min(1, (double) doneNs / runNs);
            return String.format(
                    Locale.ROOT,
                    "  %s %3.0f%%  %.2f/%.2f ms  %s  %s   ",
                    bar(f),
                    f * 100,
                    doneNs / 1e6,
                    runNs / 1e6,
                    flows,
                    eta(f, elapsedSeconds));
        }
        String inFlight = flowsDone < 0 ? "" : (flowsStarted - flowsDone) + " in flight";
        return String.format(
                Locale.ROOT,
                "  %s drain  %.2f/%.2f ms  %s  %s   ",
                bar(1),
                (doneNs - runNs) / 1e6,
                drainNs / 1e6,
                flows,
                inFlight);
    }

    static String stepLine(String unit, long done, long total, double elapsedSeconds) {
        double f = total == 0 ? 1 : Math.min(1, (double) done / total);
        return String.format(
                Locale.ROOT,
                "  %s %3.0f%%  %s %d/%d  %s   ",
                bar(f),
                f * 100,
                unit,
                done,
                total,
                eta(f, elapsedSeconds));
    }

    private static String bar(double f) {
        int filled = (int) Math.round(f * WIDTH);
        return "[" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + "]";
    }

    /** The rest at the rate so far; none before any progress or once done. */
    private static String eta(double f, double elapsedSeconds) {
        return f > 0 && f < 1 ? String.format(Locale.ROOT, "ETA %.0f s", elapsedSeconds * (1 - f) / f) : "";
    }

    void finish() {
        if (drawn) {
            out.println();
        }
    }
}
