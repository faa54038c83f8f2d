package org.vrdma.harness.junit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.harness.backend.LabPlan;
import org.vrdma.verbs.IbvContext;

/**
 * The README's sample tests for users' CI compile against the extension as it is: the annotated
 * test class as shown, and the programmatic builder inside a class of its own.
 */
class ReadmeSampleTest {
    private static final String SECTION = "## JUnit 5 extension: labs in your own CI";

    @Test
    void theReadmeSampleTestsCompileAgainstTheExtension(@TempDir Path dir) throws Exception {
        List<String> blocks = javaBlocksAfter(Files.readString(Path.of("README.md")), SECTION);
        assertThat(blocks).as("java blocks of the section").hasSizeGreaterThanOrEqualTo(2);
        String annotated = blocks.get(0);
        assertThat(annotated).contains("class MyRdmaTest", "@VrdmaLab(hosts = 2)");
        String builder = blocks.get(1);
        assertThat(builder).contains("VrdmaLabExtension.builder()");

        Path src = Files.createDirectories(dir.resolve("src"));
        Files.writeString(src.resolve("MyRdmaTest.java"), annotated);
        Files.writeString(src.resolve("MyBuilderTest.java"), """
                import java.util.List;
                import org.junit.jupiter.api.extension.RegisterExtension;
                import org.vrdma.harness.backend.LabPlan;
                import org.vrdma.harness.junit.VrdmaLabExtension;

                class MyBuilderTest {
                """ + builder + "}\n");
        String labRun = blocks.stream()
                .filter(b -> b.contains("class MyCcTest"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no LabRun sample in the section"));
        Files.writeString(src.resolve("MyCcTest.java"), labRun);
        Path classes = Files.createDirectories(dir.resolve("classes"));
        String classpath = Stream.of(
                        VrdmaLab.class,
                        LabPlan.class,
                        IbvContext.class,
                        Test.class,
                        org.opentest4j.TestAbortedException.class,
                        org.assertj.core.api.Assertions.class,
                        org.vrdma.harness.lab.LabRun.class)
                .map(ReadmeSampleTest::classpathOf)
                .distinct()
                .collect(Collectors.joining(java.io.File.pathSeparator));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-cp", classpath, "-proc:none"));
        args.add(src.resolve("MyRdmaTest.java").toString());
        args.add(src.resolve("MyBuilderTest.java").toString());
        args.add(src.resolve("MyCcTest.java").toString());
        int status;
        try (PrintStream err = new PrintStream(diagnostics, true, StandardCharsets.UTF_8)) {
            status = javac.run(null, err, err, args.toArray(String[]::new));
        }
        assertThat(status).as(diagnostics.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(classes.resolve("MyRdmaTest.class")).isRegularFile();
        assertThat(classes.resolve("MyBuilderTest.class")).isRegularFile();
        assertThat(classes.resolve("MyCcTest.class")).isRegularFile();
    }

    /** The bodies of the ```java blocks from {@code heading} up to the next heading of its level. */
    static List<String> javaBlocksAfter(String markdown, String heading) {
        int start = markdown.indexOf(heading);
        assertThat(start).as(heading).isNotNegative();
        int end = markdown.indexOf("\n## ", start + heading.length());
        String section = markdown.substring(start, end < 0 ? markdown.length() : end);
        List<String> blocks = new ArrayList<>();
        int from = 0;
        while (true) {
            int open = section.indexOf("```java\n", from);
            if (open < 0) {
                return blocks;
            }
            int close = section.indexOf("\n```", open);
            blocks.add(section.substring(open + "```java\n".length(), close + 1));
            from = close + 4;
        }
    }

    private static String classpathOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
