package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Memory windows and SRQ resizing through the native library, with a C program ({@code
 * mem_windows.c}) whose RC QPs talk to each other over a vNIC whose wire loops back: type 1 and
 * type 2 binds, rkey checks against the window, local and remote invalidation, the {@code ibv_wr_*}
 * forms, the errors libibverbs specifies, and {@code ibv_modify_srq} growing the SRQ past its ring.
 */
class MemoryWindowNativeTest {
    private static final Duration WAIT = Duration.ofSeconds(90);

    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    private Path program;

    MemoryWindowNativeTest() throws Exception {
        fx = new ShimFixture();
        program = fx.compile("mem_windows.c");
    }

    private ShimFixture.Result run(final String... scenarios) throws Exception {
        final List<String> cmd = new java.util.ArrayList<>();
        cmd.add(program.toString());
        cmd.addAll(List.of(scenarios));
        return fx.run(cmd, WAIT, Map.of());
    }

    @Test
    void theDeviceAdvertisesWindowsAndSrqResizing() throws Exception {
        final ShimFixture.Result r = run("caps");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("CAPS OK max_mw=4096 flags=0x1023c00").contains("DONE");
    }

    @Test
    void type2WindowsGrantTheirRangeUntilInvalidatedLocallyOrByThePeer() throws Exception {
        final ShimFixture.Result r = run("type2", "inv");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("TYPE2 OK").contains("INV OK").contains("DONE");
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
    }

    @Test
    void type1WindowsBindInSendQueueOrderWithANewKeyEachTime() throws Exception {
        final ShimFixture.Result r = run("type1");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output())
                .containsPattern("TYPE1 OK 0x([0-9a-f]+)->0x[0-9a-f]+->0x[0-9a-f]+")
                .contains("DONE");
    }

    @Test
    void malformedWindowRequestsAreEinvalAndBindFailuresCompleteWithMwBindErr() throws Exception {
        final ShimFixture.Result r = run("errors");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("ERRORS OK").contains("DONE");
    }

    @Test
    void aSharedReceiveQueueGrowsPastItsRingAndShrinksToWhatIsPosted() throws Exception {
        final ShimFixture.Result r = run("srq");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("SRQ OK").contains("DONE");
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "session released");
    }
}
