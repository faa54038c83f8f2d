package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertBandwidth;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertLatency;
import static org.vrdma.harness.cli.NativeVerbsHosts.assertNoErrors;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The unmodified perftest programs and {@code ibv_rc_pingpong} between the two emulator hosts a
 * subclass starts, whichever way they are placed (two processes, two namespaces). Small sizes and
 * iteration counts keep it fast; the assertions read the programs' own reports.
 */
abstract class NativePerftestCases {
    static final int ITERATIONS = 200;

    /** The two running hosts the programs use. */
    abstract NativeVerbsHosts hosts();

    @Test
    void ibvRcPingpongExchangesEveryIteration() throws Exception {
        rcPingpong();
    }

    void rcPingpong(String... extra) throws Exception {
        int port = HostProcesses.freeTcpPort("127.0.0.1");
        // RoCE needs a GID (-g 0): the address of the peer's ENI.
        List<String> cmd = new ArrayList<>(
                List.of("ibv_rc_pingpong", "-d", "vrdma0", "-g", "0", "-n", "100", "-s", "4096", "-p", "" + port));
        cmd.addAll(List.of(extra));
        var r = hosts().run(cmd, port, 90);
        System.out.println("ibv_rc_pingpong\n" + r.both());
        assertThat(r.serverExit()).as(r.both()).isZero();
        assertThat(r.clientExit()).as(r.both()).isZero();
        for (String out : List.of(r.server(), r.client())) {
            assertThat(out).contains("819200 bytes in").contains("100 iters in");
            assertThat(out).containsPattern("remote address: .*GID ::ffff:10\\.");
            assertNoErrors(out);
        }
    }

    @Test
    void ibvUdPingpongExchangesDatagramsThroughAnAddressHandle() throws Exception {
        int port = HostProcesses.freeTcpPort("127.0.0.1");
        var r = hosts().run(
                        List.of(
                                "ibv_ud_pingpong",
                                "-d",
                                "vrdma0",
                                "-g",
                                "0",
                                "-n",
                                "100",
                                "-s",
                                "2048",
                                "-p",
                                "" + port),
                        port,
                        90);
        System.out.println("ibv_ud_pingpong\n" + r.both());
        assertThat(r.serverExit()).as(r.both()).isZero();
        assertThat(r.clientExit()).as(r.both()).isZero();
        for (String out : List.of(r.server(), r.client())) {
            assertThat(out).contains("409600 bytes in").contains("100 iters in"); // 2048 B each way
            assertThat(out).containsPattern("remote address: .*GID ::ffff:10\\.");
            assertNoErrors(out);
        }
    }

    @Test
    void ibvSrqPingpongFeedsSixteenQpsFromOneSharedReceiveQueue() throws Exception {
        int port = HostProcesses.freeTcpPort("127.0.0.1");
        var r = hosts().run(
                        List.of("ibv_srq_pingpong", "-d", "vrdma0", "-g", "0", "-n", "100", "-p", "" + port), port, 90);
        System.out.println("ibv_srq_pingpong\n" + r.both());
        assertThat(r.serverExit()).as(r.both()).isZero();
        assertThat(r.clientExit()).as(r.both()).isZero();
        for (String out : List.of(r.server(), r.client())) {
            // 16 RC QPs (the default), every receive from one SRQ of 500 entries.
            assertThat(out.split("remote address:", -1)).hasSize(17);
            assertThat(out).contains("819200 bytes in").contains("100 iters in");
            assertNoErrors(out);
        }
    }

    @Test
    void ibSendBwOverUdReportsBandwidth() throws Exception {
        // A UD message is one packet: the size is the port's MTU.
        String out = bandwidth("ib_send_bw", 4096, ITERATIONS, "-c", "UD");
        assertThat(out).contains("Connection type : UD", "Using SRQ      : OFF");
    }

    @Test
    void ibSendBwOverUdWithASharedReceiveQueueReportsBandwidth() throws Exception {
        String out = bandwidth("ib_send_bw", 4096, ITERATIONS, "-c", "UD", "--use-srq");
        assertThat(out).contains("Connection type : UD", "Using SRQ      : ON");
    }

    @Test
    void ibSendLatOverUdReportsLatency() throws Exception {
        assertThat(latency("ib_send_lat", 2, ITERATIONS, "-c", "UD")).contains("Connection type : UD");
    }

    @Test
    void ibWriteBwOverUcReportsBandwidth() throws Exception {
        // UC: no ACKs and no retransmission; the sender's completions come as its packets leave.
        String out = bandwidth("ib_write_bw", 65536, ITERATIONS, "-c", "UC");
        assertThat(out).contains("Connection type : UC");
    }

    @Test
    void ibSendBwOverUcReportsBandwidth() throws Exception {
        String out = bandwidth("ib_send_bw", 16384, ITERATIONS, "-c", "UC");
        assertThat(out).contains("Connection type : UC");
    }

    @Test
    void ibWriteLatOverUcReportsLatency() throws Exception {
        assertThat(latency("ib_write_lat", 2, ITERATIONS, "-c", "UC")).contains("Connection type : UC");
    }

    @Test
    void ibSendLatOverUcReportsLatency() throws Exception {
        assertThat(latency("ib_send_lat", 2, ITERATIONS, "-c", "UC")).contains("Connection type : UC");
    }

    @Test
    void ibWriteBwReportsBandwidth() throws Exception {
        bandwidth("ib_write_bw", 65536, ITERATIONS);
    }

    @Test
    void ibReadBwReportsBandwidth() throws Exception {
        bandwidth("ib_read_bw", 65536, ITERATIONS);
    }

    @Test
    void ibSendBwReportsBandwidth() throws Exception {
        bandwidth("ib_send_bw", 65536, ITERATIONS);
    }

    @Test
    void ibAtomicBwReportsAMessageRate() throws Exception {
        bandwidth("ib_atomic_bw", 8, ITERATIONS);
    }

    @Test
    void ibWriteLatReportsLatency() throws Exception {
        latency("ib_write_lat", 2, ITERATIONS);
    }

    @Test
    void ibSendLatReportsLatency() throws Exception {
        latency("ib_send_lat", 2, ITERATIONS);
    }

    /** Runs a bandwidth test and checks both sides' reports; returns the client's output. */
    String bandwidth(String program, int size, int iterations, String... extra) throws Exception {
        int port = HostProcesses.freeTcpPort("127.0.0.1");
        List<String> cmd = new ArrayList<>(List.of(program, "-d", "vrdma0", "-n", "" + iterations, "-p", "" + port));
        cmd.addAll(List.of(extra));
        if (!program.equals("ib_atomic_bw")) {
            cmd.addAll(List.of("-s", "" + size));
        }
        var r = hosts().run(cmd, port, 90);
        System.out.println(program + "\n" + r.both());
        assertThat(r.serverExit()).as(r.both()).isZero();
        assertThat(r.clientExit()).as(r.both()).isZero();
        assertThat(r.client()).contains("Device         : vrdma0", "Link type       : Ethernet");
        assertBandwidth(r.client(), size, iterations, program.equals("ib_atomic_bw"));
        assertNoErrors(r.client());
        assertNoErrors(r.server());
        return r.client();
    }

    private String latency(String program, int size, int iterations, String... extra) throws Exception {
        int port = HostProcesses.freeTcpPort("127.0.0.1");
        List<String> cmd = new ArrayList<>(
                List.of(program, "-d", "vrdma0", "-n", "" + iterations, "-s", "" + size, "-p", "" + port));
        cmd.addAll(List.of(extra));
        var r = hosts().run(cmd, port, 90);
        System.out.println(program + "\n" + r.both());
        assertThat(r.serverExit()).as(r.both()).isZero();
        assertThat(r.clientExit()).as(r.both()).isZero();
        assertLatency(r.client(), size, iterations);
        assertNoErrors(r.client());
        assertNoErrors(r.server());
        return r.client();
    }
}
