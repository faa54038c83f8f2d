package org.vrdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.example.VerbsExample;

/** Runs the example program of the README and checks that the README shows the program as it is. */
class ExampleProgramTest {
    @Test
    void exampleWritesAndReadsAcrossTwoHosts() throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            VerbsExample.main(new String[0]);
        } finally {
            System.setOut(old);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        old.print(out);
        assertThat(out)
                .contains("client: RDMA_WRITE SUCCESS, then RDMA_READ SUCCESS: \"hello over vRDMA\"")
                .contains("server: RECV_RDMA_WITH_IMM SUCCESS, imm 0xc0ffee, 65536 bytes: \"hello over vRDMA\"");
        assertThat(IbvDeviceList.devices())
                .noneMatch(d -> d.name().equals("vrdma0") || d.name().equals("vrdma1"));
    }

    @Test
    void readmeShowsTheExampleVerbatim() throws Exception {
        String source = Files.readString(Path.of("src/main/java/org/vrdma/verbs/example/VerbsExample.java"));
        String readme = Files.readString(Path.of("README.md"));
        String body = source.substring(source.indexOf("public final class VerbsExample"));
        assertThat(readme).contains(body);
    }
}
