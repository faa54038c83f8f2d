package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The data path of the native library against a vNIC whose wire loops back: a C program connects
 * two RC QPs of its own, posts through the shared rings and polls the completion ring. Also what the
 * vNIC must survive: bad keys, memory unmapped after registration, another program's keys, and a
 * program killed with its QPs live.
 */
class QpDataPathTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** {@code IBV_WC_LOC_PROT_ERR} and {@code IBV_WC_REM_ACCESS_ERR}. */
    private static final int LOC_PROT_ERR = 4;

    private static final int REM_ACCESS_ERR = 10;

    private ShimFixture fx;
    private Path program;

    @BeforeEach
    void setUp() throws Exception {
        fx = new ShimFixture();
        program = fx.compile("qp_loopback.c");
    }

    @AfterEach
    void tearDown() throws Exception {
        if (fx != null) {
            fx.close();
        }
    }

    private ShimFixture.Result run(final String... args) throws Exception {
        final List<String> cmd = new java.util.ArrayList<>();
        cmd.add(program.toString());
        cmd.addAll(List.of(args));
        return fx.run(cmd, WAIT);
    }

    @Test
    void writeSendReadAndAtomicMoveTheRightBytesThroughTheRings() throws Exception {
        final ShimFixture.Result r = run("data");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC write status=0 opcode=1 len=4096")
                .contains("WC send-or-recv status=0 opcode=0 len=300")
                .contains("WC send-or-recv status=0 opcode=128 len=300")
                .contains("WC read status=0 opcode=2 len=2000")
                .contains("WC faa status=0 opcode=4 len=8")
                .contains("DATA OK write=4096 send=300 read=2000 faa=40->45")
                .contains("DONE");
        // Completions never went over the control socket: poll_cq reads the shared ring.
        assertThat(fx.server.succeeded(ControlProtocol.POLL_CQ)).isZero();
        assertThat(fx.server.succeeded(ControlProtocol.CREATE_QP)).isEqualTo(2);
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_QP)).isEqualTo(2);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
    }

    @Test
    void aBadLkeyIsALocalProtectionErrorCompletion() throws Exception {
        final ShimFixture.Result r = run("badlkey");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("WC badlkey status=" + LOC_PROT_ERR).contains("DONE");
    }

    @Test
    void memoryUnmappedAfterRegistrationIsALocalProtectionErrorAndTheVnicCarriesOn() throws Exception {
        final ShimFixture.Result r = run("unmapped");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("WC unmapped status=" + LOC_PROT_ERR).contains("DONE");
        assertThat(fx.loop.submit(() -> fx.device.counters().localMemoryFaults).get())
                .isPositive();
        // The vNIC is unharmed: the next program moves data.
        assertThat(run("data").output()).contains("DATA OK");
    }

    @Test
    void writingIntoUnmappedRemoteMemoryIsARemoteAccessError() throws Exception {
        final ShimFixture.Result r = run("remote-unmapped");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC remote-unmapped status=" + REM_ACCESS_ERR)
                .contains("DONE");
        assertThat(run("data").output()).contains("DATA OK");
    }

    private static final Pattern READY =
            Pattern.compile("READY qpn=(\\d+) qpn=(\\d+) lkey=(\\d+) rkey=(\\d+) addr=(\\d+)");

    @Test
    void anotherProgramsKeysReachNothing() throws Exception {
        final ShimFixture.Program owner = fx.start(List.of(program.toString(), "hold"));
        final Matcher m = READY.matcher(owner.await("READY", WAIT));
        assertThat(m.matches()).isTrue();
        final ShimFixture.Result r = run("foreign", m.group(3), m.group(4), m.group(5));
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC foreign-lkey status=" + LOC_PROT_ERR)
                .contains("WC foreign-rkey status=" + REM_ACCESS_ERR);
        // The owner's QPs are untouched.
        for (final int qpn : List.of(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)))) {
            assertThat(fx.loop
                            .submit(() -> fx.device.queuePair(qpn).state().name())
                            .get())
                    .isEqualTo("RTS");
        }
    }

    @Test
    void aKilledProgramsQpsAndRegionsAreReleased() throws Exception {
        final ShimFixture.Program p = fx.start(List.of(program.toString(), "hold"));
        final Matcher m = READY.matcher(p.await("READY", WAIT));
        assertThat(m.matches()).isTrue();
        final int qpn = Integer.parseInt(m.group(1));
        assertThat(fx.server.sessions()).singleElement().satisfies(s -> {
            assertThat(s.queuePairs()).isEqualTo(2);
            assertThat(s.memoryRegions()).hasSize(1);
        });
        assertThat(fx.loop.submit(() -> fx.device.queuePair(qpn) != null).get()).isTrue();
        p.process.destroyForcibly(); // SIGKILL: no destroy call ever reaches the vNIC
        p.waitFor(WAIT);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "the killed program's session is gone");
        assertThat(fx.loop.submit(() -> fx.device.queuePair(qpn) == null).get()).isTrue();
    }
}
