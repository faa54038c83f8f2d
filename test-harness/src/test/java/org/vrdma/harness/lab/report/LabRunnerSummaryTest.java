package org.vrdma.harness.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.harness.lab.LabResults;

/** The console summary and the report's counters show only what the backend could count. */
class LabRunnerSummaryTest {
    private static LabResults results(String backend) {
        // What a real-time run reports: the transport's counters, nothing of the links.
        return new LabResults(
                1,
                backend,
                1,
                null,
                2_000_000,
                List.of(),
                List.of(),
                List.of(),
                new LabResults.Counters(10, 9, 5_000_000, 4000, 7, 2, 1, 0, 3, 3, 0, 0, 0, 0),
                null,
                null,
                null,
                null);
    }

    @Test
    void realLinksShowNoZerosForWhatTheyCannotCount() {
        String rt = LabRunner.summary(results("netns"), 1.5);
        assertThat(rt)
                .contains(
                        "9/10 flows finished", "7 retransmitted", "2 timeouts (1 spurious)", "3 CNPs", "not observable")
                .doesNotContain("0 link transmissions", "0 ECN marks", "0 drops");
        String html =
                new HtmlReport("t").counters(results("netns").counters(), false).render();
        assertThat(html).contains("not observable (real links)").doesNotContain("<td>ECN marks</td><td>0</td>");

        String virtual = LabRunner.summary(results("virtual"), 1.5);
        assertThat(virtual).contains("0 link transmissions", "0 ECN marks", "0 drops");
    }
}
