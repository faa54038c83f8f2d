package org.vrdma.harness.lab.report;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;
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
    private final LongSupplier clockNs;
    private long lastDrawNs;
    private boolean drawn;
    // The ETA is the rate since the current phase (lab time, or steps of one unit) last stood still:
    // a real-time run spends its first seconds bringing hosts up and running perftests before any lab
    // time passes, which an ETA over the whole wall time would count as the run's own slowness.
    private String phase = "";
    private double phaseFraction;
    private long phaseStartNs;
    private boolean phaseMoved;

    ProgressBar(PrintStream out) {
        this(out, System::nanoTime);
    }

    ProgressBar(PrintStream out, LongSupplier clockNs) {
        this.out = out;
        this.clockNs = clockNs;
        this.lastDrawNs = clockNs.getAsLong() - 1_000_000_000L;
    }

    @Override
    public void onTime(long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted) {
        long now = clockNs.getAsLong();
        double f = runNs == 0 ? 1 : Math.min(1, (double) doneNs / runNs);
        phase("time", f, now);
        if (throttled(now, doneNs < runNs + drainNs)) {
            return;
        }
        draw(timeLine(doneNs, runNs, drainNs, flowsDone, flowsStarted, elapsedSeconds(now), phaseFraction));
    }

    @Override
    public void onSteps(String unit, long done, long total) {
        long now = clockNs.getAsLong();
        double f = total == 0 ? 1 : Math.min(1, (double) done / total);
        phase("steps " + unit, f, now);
        if (throttled(now, done < total)) {
            return;
        }
        draw(stepLine(unit, done, total, elapsedSeconds(now), phaseFraction));
    }

    /** Starts a phase when its kind changes, and restarts its clock until it first moves. */
    private void phase(String kind, double fraction, long nowNs) {
        if (!kind.equals(phase) || (!phaseMoved && fraction <= phaseFraction)) {
            phase = kind;
            phaseFraction = fraction;
            phaseStartNs = nowNs;
            phaseMoved = false;
        } else if (fraction > phaseFraction) {
            phaseMoved = true;
        }
    }

    private boolean throttled(long nowNs, boolean unfinished) {
        if (nowNs - lastDrawNs < 200_000_000L && unfinished) {
            return true;
        }
        lastDrawNs = nowNs;
        return false;
    }

    private double elapsedSeconds(long nowNs) {
        return (nowNs - phaseStartNs) / 1e9;
    }

    private void draw(String line) {
        out.print("\r" + line);
        out.flush();
        drawn = true;
    }

    static String timeLine(
            long doneNs, long runNs, long drainNs, long flowsDone, long flowsStarted, double elapsedSeconds) {
        return timeLine(doneNs, runNs, drainNs, flowsDone, flowsStarted, elapsedSeconds, 0);
    }

    /** {@code elapsedSeconds} since the run stood at {@code fromFraction} of its run time. */
    static String timeLine(
            long doneNs,
            long runNs,
            long drainNs,
            long flowsDone,
            long flowsStarted,
            double elapsedSeconds,
            double fromFraction) {
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
                    eta(f, fromFraction, elapsedSeconds));
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
        return stepLine(unit, done, total, elapsedSeconds, 0);
    }

    static String stepLine(String unit, long done, long total, double elapsedSeconds, double fromFraction) {
        double f = total == 0 ? 1 : Math.min(1, (double) done / total);
        return String.format(
                Locale.ROOT,
                "  %s %3.0f%%  %s %d/%d  %s   ",
                bar(f),
                f * 100,
                unit,
                done,
                total,
                eta(f, fromFraction, elapsedSeconds));
    }

    private static String bar(double f) {
        int filled = (int) Math.round(f * WIDTH);
        return "[" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + "]";
    }

    /**
     * The rest at the rate since {@code from}; none before 1% of progress (the first sample after a
     * real-time run's start covers microseconds, whose rate says nothing) or once done.
     */
    private static String eta(double f, double from, double elapsedSeconds) {
        return f - from >= 0.01 && f < 1
                ? String.format(Locale.ROOT, "ETA %.0f s", elapsedSeconds * (1 - f) / (f - from))
                : "";
    }

    void finish() {
        if (drawn) {
            out.println();
        }
    }
}
