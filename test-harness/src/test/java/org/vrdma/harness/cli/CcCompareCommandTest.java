package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code vrdma cc-compare} on short runs. */
class CcCompareCommandTest {
    /** Two-flow run of 1 ms (second flow from 0.2 ms, measured over the last 0.5 ms), 4 x 100 KB incast. */
    private static final String[] SMALL = {
        "--run-us",
        "1000",
        "--second-flow-us",
        "200",
        "--window-us",
        "500",
        "--incast-senders",
        "4",
        "--incast-bytes",
        "100000"
    };

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(final String... args) {
        final CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    private static String[] with(final String... args) {
        final String[] all = new String[1 + SMALL.length + args.length];
        all[0] = "cc-compare";
        System.arraycopy(SMALL, 0, all, 1, SMALL.length);
        System.arraycopy(args, 0, all, 1 + SMALL.length, args.length);
        return all;
    }

    @Test
    void printsAMarkdownRowPerAlgorithmWithTheSetup() {
        assertThat(run(with("--algorithms", "hpcc,static", "--markdown"))).isZero();
        final String table = out.toString();
        assertThat(table)
                .contains("Two long flows, the second from 0.2 ms, measured over 0.5-1 ms; incast 4x100 KB.")
                .contains("| algorithm | config | Jain (2 flows, 0.5-1 ms) | goodput Gbit/s |")
                .contains("| incast 4x100 KB done µs |")
                .contains("| hpcc | `defaults` | ")
                .contains("| static | `defaults` | ");
        assertThat(table.lines().filter(l -> l.startsWith("| ")).count()).isEqualTo(3);
        assertThat(table.lines()
                        .filter(l -> l.startsWith("| static"))
                        .findFirst()
                        .orElseThrow())
                .endsWith("| yes |");
    }

    @Test
    void sameSeedSameTable() {
        assertThat(run(with("--algorithms", "dcqcn", "--seed", "3"))).isZero();
        final String first = out.toString();
        out.getBuffer().setLength(0);
        assertThat(run(with("--algorithms", "dcqcn", "--seed", "3"))).isZero();
        assertThat(out.toString()).isEqualTo(first).contains("seed 3");
    }

    @Test
    void aConfigReplacesTheTablesOne() {
        assertThat(run(with("--algorithms", "static", "--config", "static={\"rateBps\": 10000000000}")))
                .isZero();
        assertThat(out.toString()).contains("{\"rateBps\": 10000000000}");
    }

    @Test
    void badInputIsAUsageErrorNamingTheProblem() {
        assertThat(run(with("--algorithms", "nope"))).isEqualTo(2);
        assertThat(err.toString()).contains("unknown algorithm 'nope'", "dcqcn");
        assertThat(run(with("--algorithms", "dcqcn", "--config", "dcqcn={\"g\": 2}")))
                .isEqualTo(2);
        assertThat(err.toString()).contains("dcqcn.g");
        assertThat(run(with("--algorithms", "dcqcn", "--config", "hpcc={}"))).isEqualTo(2);
        assertThat(err.toString()).contains("not among the algorithms");
        assertThat(run("cc-compare", "--run-us", "150")).isEqualTo(2);
        assertThat(err.toString()).contains("multiple of 100");
    }

    @Test
    void listedInTheHelp() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("cc-compare");
    }
}
