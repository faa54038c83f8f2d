package org.vrdma.harness.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuIdleStateTest {
    @TempDir
    Path sys;

    private void write(String relative, String content) throws IOException {
        Path p = sys.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    private void kvmGuest(long haltPollNs) throws IOException {
        write("devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
        write("devices/system/cpu/cpuidle/current_governor", "haltpoll\n");
        write("devices/system/cpu/cpuidle/current_governor_ro", "haltpoll\n");
        write("module/haltpoll/parameters/guest_halt_poll_ns", haltPollNs + "\n");
        write("devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n");
        write("devices/system/cpu/cpu0/cpuidle/state0/latency", "0\n");
        write("devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n");
        write("devices/system/cpu/cpu0/cpuidle/state1/name", "haltpoll\n");
        write("devices/system/cpu/cpu0/cpuidle/state1/latency", "1\n");
        write("devices/system/cpu/cpu0/cpuidle/state1/disable", "0\n");
    }

    @Test
    void haltpollGuestWithHaltPollingOffSaysEveryBlockingHopPaysTheVmExit() throws IOException {
        kvmGuest(0);
        CpuIdleState s = CpuIdleState.read(sys);
        assertThat(s.driver()).isEqualTo("haltpoll");
        assertThat(s.governor()).isEqualTo("haltpoll");
        assertThat(s.haltPollNs()).isZero();
        assertThat(s.states()).containsExactly("POLL (0 us)", "haltpoll (1 us)");
        assertThat(s.haltsWithoutPolling()).isTrue();
        assertThat(s.describe())
                .isEqualTo("cpuidle driver haltpoll, governor haltpoll, guest_halt_poll_ns 0;"
                        + " cpu0 idle states (exit latency): POLL (0 us), haltpoll (1 us)");
        assertThat(s.meaning()).startsWith("halt polling is off").contains("VM exit", "blocking TCP and UDP");
    }

    @Test
    void haltPollingOnSaysHowLongAnIdleVcpuPolls() throws IOException {
        kvmGuest(200_000);
        CpuIdleState s = CpuIdleState.read(sys);
        assertThat(s.haltPollNs()).isEqualTo(200_000);
        assertThat(s.haltsWithoutPolling()).isFalse();
        assertThat(s.meaning()).startsWith("halt polling is on").contains("up to 200 us");
    }

    @Test
    void bareMetalDriverListsItsStatesByNumberAndMarksDisabledOnes() throws IOException {
        write("devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
        write("devices/system/cpu/cpuidle/current_governor", "menu\n");
        String[][] states = {{"POLL", "0"}, {"C1", "2"}, {"C1E", "10"}, {"C6", "133"}};
        for (int i = 0; i < states.length; i++) {
            write("devices/system/cpu/cpu0/cpuidle/state" + i + "/name", states[i][0] + "\n");
            write("devices/system/cpu/cpu0/cpuidle/state" + i + "/latency", states[i][1] + "\n");
            write("devices/system/cpu/cpu0/cpuidle/state" + i + "/disable", i == 3 ? "1\n" : "0\n");
        }
        // state10 sorts after state2 by number, not between state1 and state2 by name.
        write("devices/system/cpu/cpu0/cpuidle/state10/name", "C10\n");
        write("devices/system/cpu/cpu0/cpuidle/state10/latency", "890\n");
        CpuIdleState s = CpuIdleState.read(sys);
        assertThat(s.haltPollNs()).isEqualTo(-1);
        assertThat(s.states())
                .containsExactly("POLL (0 us)", "C1 (2 us)", "C1E (10 us)", "C6 (133 us) off", "C10 (890 us)");
        assertThat(s.describe())
                .startsWith("cpuidle driver intel_idle, governor menu;")
                .doesNotContain("guest_halt");
        assertThat(s.meaning()).contains("exit latency");
    }

    @Test
    void missingOrUnreadableFilesGiveNoneAndUnknownInsteadOfFailing() throws IOException {
        CpuIdleState empty = CpuIdleState.read(sys);
        assertThat(empty).isEqualTo(new CpuIdleState("", "", -1, java.util.List.of()));
        assertThat(empty.describe()).isEqualTo("cpuidle driver none, governor none");
        assertThat(empty.meaning()).startsWith("no cpuidle driver");

        write("devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
        write("module/haltpoll/parameters/guest_halt_poll_ns", "not a number\n");
        CpuIdleState garbled = CpuIdleState.read(sys);
        assertThat(garbled.haltPollNs()).isEqualTo(-1);
        assertThat(garbled.haltsWithoutPolling()).isFalse();
    }
}
