package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The progress line: bar, percentage, lab time or steps, flows, and an ETA from the rate so far. */
class ProgressBarTest {
    @Test
    void etaIsTheRemainingRunTimeAtTheRateSoFar() {
        // A quarter of the run time in 3 s: 9 s to go.
        String line = ProgressBar.timeLine(2_500_000, 10_000_000, 0, 40, 100, 3.0);
        assertThat(line)
                .startsWith("\u0020 [########......................]  25%")
                .contains("2.50/10.00 ms", "40/100 flows", "ETA 9 s");
    }

    @Test
    void aLongDrainAllowanceDoesNotInflateTheEta() {
        // A 10 ms run with up to 300 ms of drain after it: the drain ends when the network is idle, so
        // half the run in 1 s is 1 s to go, not the 30 s that the drain's upper bound would suggest.
        String line = ProgressBar.timeLine(5_000_000, 10_000_000, 300_000_000, 400, 800, 1.0);
        assertThat(line).contains(" 50%", "5.00/10.00 ms", "400/800 flows", "ETA 1 s");
    }

    @Test
    void theDrainShowsWhatIsInFlightAndNoEta() {
        String line = ProgressBar.timeLine(10_850_000, 10_000_000, 50_000_000, 2480, 2500, 4.0);
        assertThat(line)
                .contains("[##############################] drain", "0.85/50.00 ms", "2480/2500 flows", "20 in flight")
                .doesNotContain("ETA", "%");
    }

    @Test
    void flowsNotYetCountedShowAsPlanned() {
        String line = ProgressBar.timeLine(1_000_000, 4_000_000, 1_000_000, -1, 64, 2.0);
        assertThat(line).contains("64 flows planned", "ETA 6 s").doesNotContain("/64");
    }

    @Test
    void stepsCountInTheirOwnUnit() {
        // Two of five tests in 20 s: 30 s to go.
        assertThat(ProgressBar.stepLine("test", 2, 5, 20.0))
                .startsWith("\u0020 [############..................]  40%")
                .contains("test 2/5", "ETA 30 s")
                .doesNotContain("ms", "flows");
    }

    @Test
    void noEtaBeforeProgressOrWhenDone() {
        assertThat(ProgressBar.timeLine(0, 10_000_000, 0, 0, 0, 1.0))
                .contains("  0%")
                .doesNotContain("ETA");
        assertThat(ProgressBar.timeLine(10_000_000, 10_000_000, 0, 7, 7, 5.0))
                .contains("[##############################] 100%")
                .doesNotContain("ETA");
        assertThat(ProgressBar.stepLine("test", 0, 5, 1.0)).doesNotContain("ETA");
        assertThat(ProgressBar.stepLine("test", 5, 5, 9.0)).contains("100%").doesNotContain("ETA");
    }

    @Test
    void theEtaCountsFromWhenTheRunStartedMovingNotFromEarlierPhases() {
        // A real-time lab: 40 s of perftests, then 20 s bringing the flow agents up (no lab time yet),
        // then 1.5% of the run time in 1 s: 66 s to go, not 61 s x 98.5 / 1.5 = 4006 s.
        long[] nowNs = {0};
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressBar bar = new ProgressBar(new PrintStream(bytes, true, StandardCharsets.UTF_8), () -> nowNs[0]);
        bar.onSteps("test", 0, 2);
        nowNs[0] = 20_000_000_000L;
        bar.onSteps("test", 1, 2);
        assertThat(lastLine(bytes)).contains("test 1/2", "ETA 20 s");
        nowNs[0] = 30_000_000_000L;
        bar.onSteps("test", 1, 2); // redrawn without progress: the rate still counts from the start
        assertThat(lastLine(bytes)).contains("test 1/2", "ETA 30 s");
        nowNs[0] = 40_000_000_000L;
        bar.onTime(0, 3_000_000_000L, 10_000_000_000L, -1, 1028);
        nowNs[0] = 60_000_000_000L;
        bar.onTime(0, 3_000_000_000L, 10_000_000_000L, -1, 1028);
        assertThat(lastLine(bytes)).contains("  0%").doesNotContain("ETA");
        nowNs[0] = 60_200_000_000L;
        bar.onTime(5_000L, 3_000_000_000L, 10_000_000_000L, -1, 1028); // 5 us after GO: no rate yet
        assertThat(lastLine(bytes)).contains("  0%").doesNotContain("ETA");
        nowNs[0] = 61_000_000_000L;
        bar.onTime(45_000_000L, 3_000_000_000L, 10_000_000_000L, -1, 1028);
        assertThat(lastLine(bytes)).contains("45.00/3000.00 ms", "ETA 66 s"); // 1 s x 98.5 / 1.5
        nowNs[0] = 61_500_000_000L;
        bar.onTime(60_000_000L, 3_000_000_000L, 10_000_000_000L, -1, 1028);
        assertThat(lastLine(bytes)).contains("  2%", "ETA 74 s"); // 1.5 s x 98 / 2
    }

    private static String lastLine(ByteArrayOutputStream bytes) {
        String all = bytes.toString(StandardCharsets.UTF_8);
        return all.substring(all.lastIndexOf('\r') + 1);
    }

    @Test
    void drawsOnOneLineAndEndsItOnFinish() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressBar bar = new ProgressBar(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        bar.onTime(10_000_000, 10_000_000, 0, 3, 3);
        bar.onSteps("test", 1, 1);
        bar.finish();
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out).startsWith("\r  [").endsWith(System.lineSeparator()).contains("3/3 flows", "\r  [", "test 1/1");
    }
}
