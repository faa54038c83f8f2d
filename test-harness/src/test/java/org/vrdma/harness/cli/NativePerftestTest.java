package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertBandwidth;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertLatency;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertNoErrors;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Debian's unmodified perftest and {@code ibv_rc_pingpong} between two emulator hosts in two
 * processes on 127.0.0.1: each host is a vSwitch on a real UDP socket plus a vNIC serving the native
 * {@code libibverbs.so.1}; the programs find it through {@code LD_LIBRARY_PATH} and exchange QP
 * information over their default TCP out-of-band channel. Small sizes and iteration counts keep
 * it fast; the assertions read the programs' own reports.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativePerftestTest {
    private static final String IP = "127.0.0.1";
    private static final int ITERATIONS = 200;

    private NativeVerbsHosts hosts;

    @BeforeAll
    void startHosts() throws Exception {
        hosts = new NativeVerbsHosts(
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.1",
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.2",
                IP);
    }

    @AfterAll
    void stopHosts() throws Exception {
        if (hosts != null) {
            hosts.close();
        }
    }

    @Test
    void ibvRcPingpongExchangesEveryIteration() throws Exception {
        NativePerftestRuns.rcPingpong(hosts);
    }

    @Test
    void ibWriteBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_write_bw", 65536, ITERATIONS);
    }

    @Test
    void ibReadBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_read_bw", 65536, ITERATIONS);
    }

    @Test
    void ibSendBwReportsBandwidth() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_send_bw", 65536, ITERATIONS);
    }

    @Test
    void ibSendBwInEventModeSleepsOnTheCompletionChannel() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_send_bw", 65536, ITERATIONS, "-e");
    }

    @Test
    void ibAtomicBwReportsAMessageRate() throws Exception {
        NativePerftestRuns.bandwidth(hosts, "ib_atomic_bw", 8, ITERATIONS);
    }

    @Test
    void ibWriteLatReportsLatency() throws Exception {
        NativePerftestRuns.latency(hosts, "ib_write_lat", 2, ITERATIONS);
    }

    @Test
    void ibSendLatReportsLatency() throws Exception {
        NativePerftestRuns.latency(hosts, "ib_send_lat", 2, ITERATIONS);
    }

    /** The same programs, shared by the two-process and the two-namespace tests. */
    static final class NativePerftestRuns {
        private NativePerftestRuns() {}

        static void rcPingpong(NativeVerbsHosts hosts) throws Exception {
            int port = HostProcesses.freeTcpPort("127.0.0.1");
            // RoCE needs a GID (-g 0): the address of the peer's ENI.
            var r = hosts.run(
                    List.of("ibv_rc_pingpong", "-d", "vrdma0", "-g", "0", "-n", "100", "-s", "4096", "-p", "" + port),
                    port,
                    90);
            System.out.println("ibv_rc_pingpong\n" + r.both());
            assertThat(r.serverExit()).as(r.both()).isZero();
            assertThat(r.clientExit()).as(r.both()).isZero();
            for (String out : List.of(r.server(), r.client())) {
                assertThat(out).contains("819200 bytes in").contains("100 iters in");
                assertThat(out).containsPattern("remote address: .*GID ::ffff:10\\.");
                assertNoErrors(out);
            }
        }

        static void bandwidth(NativeVerbsHosts hosts, String program, int size, int iterations, String... extra)
                throws Exception {
            int port = HostProcesses.freeTcpPort("127.0.0.1");
            List<String> cmd =
                    new java.util.ArrayList<>(List.of(program, "-d", "vrdma0", "-n", "" + iterations, "-p", "" + port));
            cmd.addAll(List.of(extra));
            if (!program.equals("ib_atomic_bw")) {
                cmd.addAll(List.of("-s", "" + size));
            }
            var r = hosts.run(cmd, port, 90);
            System.out.println(program + "\n" + r.both());
            assertThat(r.serverExit()).as(r.both()).isZero();
            assertThat(r.clientExit()).as(r.both()).isZero();
            assertThat(r.client()).contains("Device         : vrdma0", "Link type       : Ethernet");
            assertBandwidth(r.client(), size, iterations, program.equals("ib_atomic_bw"));
            assertNoErrors(r.client());
            assertNoErrors(r.server());
        }

        static void latency(NativeVerbsHosts hosts, String program, int size, int iterations) throws Exception {
            int port = HostProcesses.freeTcpPort("127.0.0.1");
            var r = hosts.run(
                    List.of(program, "-d", "vrdma0", "-n", "" + iterations, "-s", "" + size, "-p", "" + port),
                    port,
                    90);
            System.out.println(program + "\n" + r.both());
            assertThat(r.serverExit()).as(r.both()).isZero();
            assertThat(r.clientExit()).as(r.both()).isZero();
            assertLatency(r.client(), size, iterations);
            assertNoErrors(r.client());
            assertNoErrors(r.server());
        }
    }
}
