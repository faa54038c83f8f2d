package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The progress line: bar, percentage, lab time, flows, and an ETA from the rate so far. */
class ProgressBarTest {
    @Test
    void etaIsTheRemainingFractionAtTheRateSoFar() {
        // A quarter of the lab time in 3 s: 9 s to go.
        String line = ProgressBar.line(2_500_000, 10_000_000, 40, 100, 3.0);
        assertThat(line)
                .startsWith("\u0020 [########......................]  25%")
                .contains("2.50/10.00 ms", "40/100 flows", "ETA 9 s");
    }

    @Test
    void noEtaBeforeProgressOrWhenDone() {
        assertThat(ProgressBar.line(0, 10_000_000, 0, 0, 1.0)).contains("  0%").doesNotContain("ETA");
        assertThat(ProgressBar.line(10_000_000, 10_000_000, 7, 7, 5.0))
                .contains("[##############################] 100%")
                .doesNotContain("ETA");
    }

    @Test
    void drawsOnOneLineAndEndsItOnFinish() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressBar bar = new ProgressBar(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        bar.onProgress(10_000_000, 10_000_000, 3, 3);
        bar.finish();
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out).startsWith("\r  [").endsWith(System.lineSeparator()).contains("3/3 flows");
    }
}
