package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * UD queue pairs, address handles and shared receive queues of the native library against a vNIC
 * whose wire loops back: a C program ({@code ud_srq_loopback.c}) moves datagrams and SRQ receives
 * through the shared rings and checks every byte, field and error the way libibverbs defines them.
 */
class UdSrqDataPathTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** {@code IBV_WC_LOC_LEN_ERR} and {@code IBV_WC_LOC_QP_OP_ERR}. */
    private static final int LOC_LEN_ERR = 1;

    private static final int LOC_QP_OP_ERR = 2;

    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    private Path program;

    UdSrqDataPathTest() throws Exception {
        fx = new ShimFixture();
        program = fx.compile("ud_srq_loopback.c");
    }

    @Test
    void datagramsGoThroughAddressHandlesAndBadOnesFailCleanly() throws Exception {
        final ShimFixture.Result r = fx.run(List.of(program.toString(), "ud"), WAIT);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC ud status=0 opcode=128 len=63") // 40-byte GRH + 23 bytes
                .contains("WC reply status=0 opcode=128 len=46")
                .contains("WC toolong status=" + LOC_LEN_ERR)
                .contains("WC badah status=" + LOC_QP_OP_ERR)
                .contains("UD OK")
                .contains("DONE");
        // Address handles live in the vNIC: the four refused ones were never created.
        assertThat(fx.server.succeeded(ControlProtocol.CREATE_AH)).isEqualTo(3);
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_AH)).isEqualTo(3);
        // Completions still never cross the control socket.
        assertThat(fx.server.succeeded(ControlProtocol.POLL_CQ)).isZero();
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
    }

    @Test
    void aSharedReceiveQueueFeedsTwoQpsAndKeepsItsLimits() throws Exception {
        final ShimFixture.Result r = fx.run(List.of(program.toString(), "srq"), WAIT);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SRQ OK").contains("DONE");
        assertThat(fx.server.succeeded(ControlProtocol.CREATE_SRQ)).isEqualTo(1);
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_SRQ)).isEqualTo(1);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
        assertThat(mappedSrqRings())
                .as("the SRQ ring is unmapped from the vNIC")
                .isZero();
    }

    /** SRQ rings this JVM (the vNIC) has mapped now. */
    private static long mappedSrqRings() throws Exception {
        try (var lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.contains("memfd:vrdma-srq")).count();
        }
    }
}
