package org.vrdma.harness.ccsim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Generates the comparison table of congestion-control/README.md into
 * test-harness/target/cc-comparison.md (and prints it): {@code mvn -pl test-harness -am test
 * -Dtest=CcComparisonTable -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class CcComparisonTable {
    @Test
    void generate() throws IOException {
        final List<CcComparison.Row> rows = CcComparison.runAll(1);
        final String table = CcComparison.toMarkdown(rows, 1);
        Files.writeString(Files.createDirectories(Path.of("target")).resolve("cc-comparison.md"), table);
        System.out.print(table);
        assertThat(rows).hasSize(CcComparison.ALGORITHMS.size());
    }
}
