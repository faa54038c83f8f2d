package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The data path of the native library against a vNIC whose wire loops back: a C program connects
 * two RC QPs of its own, posts through the shared rings and polls the completion ring. Registered
 * memory is zero-copy (the library's memfd mapped by the vNIC) unless {@code VRDMA_ZERO_COPY=0}
 * turns on the {@code process_vm_readv/writev} fallback. Also what the vNIC must survive: bad keys,
 * memory unmapped after registration, another program's keys, and a program killed with its QPs
 * live.
 */
class QpDataPathTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** {@code IBV_WC_LOC_PROT_ERR} and {@code IBV_WC_REM_ACCESS_ERR}. */
    private static final int LOC_PROT_ERR = 4;

    private static final int REM_ACCESS_ERR = 10;

    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    private Path program;

    QpDataPathTest() throws Exception {
        fx = new ShimFixture();
        program = fx.compile("qp_loopback.c");
    }

    /** Environment of a program that turns zero-copy registration off (process_vm_readv/writev). */
    private static final Map<String, String> NO_ZERO_COPY = Map.of("VRDMA_ZERO_COPY", "0");

    private ShimFixture.Result run(final String... args) throws Exception {
        return run(Map.of(), args);
    }

    private ShimFixture.Result run(final Map<String, String> env, final String... args) throws Exception {
        final List<String> cmd = new java.util.ArrayList<>();
        cmd.add(program.toString());
        cmd.addAll(List.of(args));
        return fx.run(cmd, WAIT, env);
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
        // Zero-copy by default: the vNIC mapped the region and made no system call to move data.
        assertThat(fx.server.memoryStats()).satisfies(m -> {
            assertThat(m.zeroCopyRegions()).isEqualTo(1);
            assertThat(m.copyRegions()).isZero();
            assertThat(m.copyCalls()).isZero();
        });
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
        assertThat(ShimFixture.mappedZeroCopyRegions()).isZero();
    }

    @Test
    void theFallbackForcedByTheEnvironmentMovesTheSameBytesWithSystemCalls() throws Exception {
        final ShimFixture.Result r = run(NO_ZERO_COPY, "data");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("DATA OK write=4096 send=300 read=2000 faa=40->45");
        assertThat(fx.server.memoryStats()).satisfies(m -> {
            assertThat(m.zeroCopyRegions()).isZero();
            assertThat(m.copyRegions()).isEqualTo(1);
            assertThat(m.refusedMemfds()).isZero();
            // WRITE: read + write; SEND: read + write; READ: read + write; FETCH_ADD: read + write.
            assertThat(m.copyCalls()).isGreaterThanOrEqualTo(8);
            assertThat(m.copyBytes()).isGreaterThanOrEqualTo(2L * (4096 + 300 + 2000));
        });
    }

    @Test
    void zeroCopyRegistrationKeepsTheProgramsMemoryAndItsNeighbours() throws Exception {
        final ShimFixture.Result r = run("zc");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC zc-after-reg status=0")
                .contains("WC zc-sub status=0")
                .contains("WC zc-unaligned status=0")
                .contains("WC zc-file status=0")
                .contains("WC zc-straddle status=0")
                .contains("WC zc-past-end status=" + REM_ACCESS_ERR)
                .contains("ZC OK")
                .contains("DONE");
        assertThat(fx.server.memoryStats()).satisfies(m -> {
            // The main region, the one inside it, the heap region; the file mapping and the
            // region straddling a registered one fall back.
            assertThat(m.zeroCopyRegions()).isEqualTo(3);
            assertThat(m.copyRegions()).isEqualTo(2);
            assertThat(m.refusedMemfds()).isZero();
        });
    }

    @Test
    void deregistrationUnmapsTheRegionInTheVnic() throws Exception {
        final ShimFixture.Program p = fx.start(List.of(program.toString(), "dereg"));
        p.await("REGISTERED", WAIT);
        assertThat(ShimFixture.mappedZeroCopyRegions()).isEqualTo(2);
        p.send("go");
        p.await("DEREGISTERED", WAIT);
        assertThat(ShimFixture.mappedZeroCopyRegions()).isEqualTo(1);
        p.send("go");
        assertThat(p.waitFor(WAIT)).as(p.output()).isZero();
        assertThat(p.output())
                .contains("WC dereg-write status=0")
                .contains("WC dereg-stale status=" + REM_ACCESS_ERR)
                .contains("DEREG OK");
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
        assertThat(ShimFixture.mappedZeroCopyRegions()).isZero();
    }

    @Test
    void afterForkInitAForkedChildHasNoMappingOfZeroCopyPages() throws Exception {
        final ShimFixture.Result r = run("forksafe");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .contains("WC fork-write status=0")
                .contains("FORK OK")
                .contains("DONE");
        assertThat(fx.server.memoryStats().zeroCopyRegions()).isEqualTo(1);
    }

    @Test
    void zeroCopyPagesTheProgramUnmapsStayPinnedInTheVnic() throws Exception {
        // Like pages pinned by a kernel driver: the region keeps the pages it was registered with.
        final ShimFixture.Result r = run("unmapped");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("WC unmapped status=0").contains("DONE");
        assertThat(fx.loop.submit(() -> fx.device.counters().localMemoryFaults).get())
                .isZero();
    }

    @Test
    void aBadLkeyIsALocalProtectionErrorCompletion() throws Exception {
        final ShimFixture.Result r = run("badlkey");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("WC badlkey status=" + LOC_PROT_ERR).contains("DONE");
    }

    @Test
    void memoryUnmappedAfterRegistrationIsALocalProtectionErrorAndTheVnicCarriesOn() throws Exception {
        final ShimFixture.Result r = run(NO_ZERO_COPY, "unmapped");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("WC unmapped status=" + LOC_PROT_ERR).contains("DONE");
        assertThat(fx.loop.submit(() -> fx.device.counters().localMemoryFaults).get())
                .isPositive();
        // The vNIC is unharmed: the next program moves data.
        assertThat(run("data").output()).contains("DATA OK");
    }

    @Test
    void writingIntoUnmappedRemoteMemoryIsARemoteAccessError() throws Exception {
        final ShimFixture.Result r = run(NO_ZERO_COPY, "remote-unmapped");
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
        assertThat(ShimFixture.mappedZeroCopyRegions()).isEqualTo(1);
        p.process.destroyForcibly(); // SIGKILL: no destroy call ever reaches the vNIC
        p.waitFor(WAIT);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "the killed program's session is gone");
        assertThat(fx.loop.submit(() -> fx.device.queuePair(qpn) == null).get()).isTrue();
        assertThat(ShimFixture.mappedZeroCopyRegions()).isZero();
    }
}
