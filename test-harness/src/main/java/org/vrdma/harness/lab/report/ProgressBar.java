package org.vrdma.harness.lab.report;

import java.io.PrintStream;
import java.util.Locale;
import org.vrdma.harness.lab.RunProgress;

/**
 * A one-line progress bar with an ETA from the wall-clock rate so far, redrawn at most five times a
 * second: {@code [#########...........]  45%  4.50/10.00 ms  1234/2500 flows  ETA 12 s}.
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
    public void onProgress(long doneNs, long totalNs, long flowsDone, long flowsStarted) {
        long now = System.nanoTime();
        if (now - lastDrawNs < 200_000_000L && doneNs < totalNs) {
            return;
        }
        lastDrawNs = now;
        out.print("\r" + line(doneNs, totalNs, flowsDone, flowsStarted, (now - startWallNs) / 1e9));
        out.flush();
        drawn = true;
    }

    static String line(long doneNs, long totalNs, long flowsDone, long flowsStarted, double elapsedSeconds) {
        double f = totalNs == 0 ? 1 : Math.min(1, (double) doneNs / totalNs);
        int filled = (int) Math.round(f * WIDTH);
        String eta = f > 0 && f < 1 ? String.format(Locale.ROOT, "ETA %.0f s", elapsedSeconds * (1 - f) / f) : "";
        return String.format(
                Locale.ROOT,
                "  [%s%s] %3.0f%%  %.2f/%.2f ms  %d/%d flows  %s   ",
                "#".repeat(filled),
                ".".repeat(WIDTH - filled),
                f * 100,
                doneNs / 1e6,
                totalNs / 1e6,
                flowsDone,
                flowsStarted,
                eta);
    }

    void finish() {
        if (drawn) {
            out.println();
        }
    }
}
