package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.vrdma.harness.lab.LabLoader;

/**
 * The same two-host lab on every real-time backend: RDMA WRITEs one way, then the other, every byte
 * checked by the receiver, and nothing of the lab left afterwards. The netns backend needs root,
 * the docker backend a Docker engine: ./test.sh runs as root and starts one; without them the
 * test fails, it does not skip.
 */
class LabBackendsTest {
    private static final long BYTES = 16L << 20;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"embedded", "netns", "docker"})
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void theTwoHostLabMovesByteExactRdmaWritesBothWaysAndLeavesNothingBehind(String backendName) throws Exception {
        HostBackend backend = HostBackend.byName(backendName);
        String ours = RunningLab.idPrefix() + "-" + ProcessHandle.current().pid() + "-";
        List<String> before = leftovers(backend, ours);
        assertThat(before).as("nothing of an earlier lab of this run").isEmpty();

        // The lab file every backend runs (./vrdma lab run labs/two-hosts.json runs it in virtual time).
        RunningLab lab = RunningLab.start(backend, LabPlans.of(LabLoader.load(Path.of("labs/two-hosts.json"))));
        List<Transfer> transfers;
        List<String> whileUp;
        try {
            LabHost h1 = lab.host("h0");
            LabHost h2 = lab.host("h1");
            assertThat(lab.id()).startsWith(ours);
            assertThat(h1.underlayIp()).isNotEqualTo(backendName.equals("embedded") ? "" : h2.underlayIp());
            whileUp = lab.leftovers();
            // One after the other: two at once on two busy cores can starve a QP into RETRY_EXC_ERR.
            transfers = List.of(
                    lab.transfer(h1, h2, TransferOptions.verifiedWrite(BYTES)),
                    lab.transfer(h2, h1, TransferOptions.verifiedWrite(BYTES).withSeed(7)));
        } finally {
            lab.close();
        }
        for (Transfer t : transfers) {
            t.assertByteExact();
            assertThat(t.verifiedBytes()).hasValue(BYTES);
            assertThat(t.clientOutput()).contains("vSwitch on " + t.from().underlayIp() + ":");
            assertThat(t.serverOutput()).contains("vSwitch on " + t.to().underlayIp() + ":");
        }
        switch (backendName) {
            case "embedded" ->
                assertThat(transfers.getFirst().from().underlayIp()).isEqualTo("127.0.0.1");
            case "netns" -> {
                assertThat(transfers.getFirst().from().underlayIp()).startsWith("192.168.216.");
                assertThat(whileUp).anyMatch(s -> s.startsWith("network namespace " + lab.id() + "-h0"));
            }
            default -> {
                assertThat(transfers.getFirst().from().underlayIp()).doesNotStartWith("127.");
                assertThat(whileUp)
                        .anyMatch(s -> s.startsWith("container /" + lab.id() + "-h1"))
                        .anyMatch(s -> s.equals("Docker network " + lab.id()));
            }
        }
        assertThat(lab.leftovers()).as("after close").isEmpty();
        assertThat(leftovers(backend, ours)).isEqualTo(before);
    }

    static List<String> leftovers(HostBackend backend, String prefix) throws Exception {
        List<String> found = new java.util.ArrayList<>(backend.leftovers(prefix));
        found.addAll(LabProcesses.withLabPrefix(prefix));
        return found;
    }
}
