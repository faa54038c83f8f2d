package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code ./vrdma host}: one host per process, server and client talking over real sockets on 127.0.0.1. */
class HostCommandTest {
    private static final String IP = "127.0.0.1";

    private HostProcesses processes;
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @BeforeEach
    void setUp() throws Exception {
        processes = new HostProcesses();
    }

    @AfterEach
    void tearDown() throws Exception {
        processes.close();
    }

    private int runHere(String... args) {
        CommandLine cli = new CommandLine(new VrdmaCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void twoProcessesMoveVerifiedRdmaWritesAndBothReportSuccess(@TempDir Path dir) throws Exception {
        Path pcap = dir.resolve("client.pcap");
        int udpA = HostProcesses.freeUdpPort(IP);
        int udpB = HostProcesses.freeUdpPort(IP);
        int oob = HostProcesses.freeTcpPort(IP);
        Process server = processes.start(
                "server",
                HostProcesses.javaCommand(
                        List.of(),
                        "host",
                        "--server",
                        "--underlay",
                        IP + ":" + udpA,
                        "--eni-ip",
                        "10.9.0.1",
                        "--peer-eni-ip",
                        "10.9.0.2",
                        "--peer-underlay",
                        IP + ":" + udpB,
                        "--oob-port",
                        String.valueOf(oob),
                        "--connect-timeout",
                        "60",
                        "--test-timeout",
                        "100"));
        Process client = processes.start(
                "client",
                HostProcesses.javaCommand(
                        List.of(),
                        "host",
                        "--client",
                        "--underlay",
                        IP + ":" + udpB,
                        "--eni-ip",
                        "10.9.0.2",
                        "--peer-eni-ip",
                        "10.9.0.1",
                        "--peer-underlay",
                        IP + ":" + udpA,
                        "--oob-port",
                        String.valueOf(oob),
                        "--test",
                        "write_bw",
                        "--size",
                        "64K",
                        "--iterations",
                        "512",
                        "--buffer",
                        "8M",
                        "--verify",
                        "--capture",
                        pcap.toString(),
                        "--connect-timeout",
                        "60",
                        "--test-timeout",
                        "100"));
        int clientExit = HostProcesses.waitFor(client, 120, TimeUnit.SECONDS, "client");
        int serverExit = HostProcesses.waitFor(server, 20, TimeUnit.SECONDS, "server");
        String clientOut = processes.output("client");
        String serverOut = processes.output("server");
        assertThat(clientExit).as(clientOut).isZero();
        assertThat(serverExit).as(serverOut).isZero();
        // 512 x 64 KiB = 32 MiB in 4 rounds of the 8 MiB buffer, each checked by the server.
        assertThat(clientOut)
                .contains("RDMA_Write BW Test", "local address:", "remote address:", "QPN 0x")
                .contains("intact")
                .contains("verify: 33554432 bytes byte-exact")
                .containsPattern(" 65536\\s+512\\s+\\d+\\.\\d+");
        assertThat(serverOut)
                .contains("waiting for a client on 127.0.0.1:" + oob)
                .contains("verify: 33554432 bytes written by the client, byte-exact");
        // The client's capture: its underlay datagrams decode as Geneve (VNI 100) carrying RoCEv2.
        assertThat(clientOut).containsPattern(" capture: [1-9][0-9]* packets in ");
        String writes = tshark(
                dir,
                "-r",
                pcap.toString(),
                "-d",
                "udp.port==" + udpA + ",geneve",
                "-Y",
                "geneve && infiniband.bth.opcode == 6",
                "-T",
                "fields",
                "-e",
                "geneve.vni",
                "-e",
                "ip.dst");
        assertThat(writes.lines().toList())
                .as("RDMA WRITE First packets on the underlay")
                .hasSizeGreaterThanOrEqualTo(512)
                .allSatisfy(l -> assertThat(l).startsWith("0x000064\t").contains("10.9.0.1"));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void sendLatWithVerifySaysItChecksNoPayload() throws Exception {
        int udpA = HostProcesses.freeUdpPort(IP);
        int udpB = HostProcesses.freeUdpPort(IP);
        int oob = HostProcesses.freeTcpPort(IP);
        StringWriter serverOut = new StringWriter();
        int[] serverExit = {-1};
        Thread server = Thread.ofPlatform().start(() -> {
            CommandLine cli = new CommandLine(new VrdmaCli());
            cli.setOut(new PrintWriter(serverOut, true));
            cli.setErr(new PrintWriter(serverOut, true));
            serverExit[0] = cli.execute(
                    "host",
                    "--server",
                    "--underlay",
                    IP + ":" + udpA,
                    "--eni-ip",
                    "10.9.0.1",
                    "--peer-eni-ip",
                    "10.9.0.2",
                    "--peer-underlay",
                    IP + ":" + udpB,
                    "--oob-port",
                    String.valueOf(oob),
                    "--connect-timeout",
                    "60",
                    "--test-timeout",
                    "60",
                    "--busy-poll-us",
                    "0");
        });
        int clientExit = runHere(
                "host",
                "--client",
                "--underlay",
                IP + ":" + udpB,
                "--eni-ip",
                "10.9.0.2",
                "--peer-eni-ip",
                "10.9.0.1",
                "--peer-underlay",
                IP + ":" + udpA,
                "--oob-port",
                String.valueOf(oob),
                "--test",
                "send_lat",
                "--size",
                "64",
                "--iterations",
                "50",
                "--verify",
                "--connect-timeout",
                "60",
                "--test-timeout",
                "60",
                "--busy-poll-us",
                "0");
        server.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(clientExit).as(out + "\n" + err).isZero();
        assertThat(serverExit[0]).as(serverOut.toString()).isZero();
        assertThat(out.toString())
                .contains("Send Latency Test")
                .contains("Verify : OFF (send_lat checks no payload)")
                .contains("verify: not done: send_lat checks no payload")
                .doesNotContain("Verify : ON");
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void aForeverServerEndedByASignalLeavesAWholeCapture(@TempDir Path dir) throws Exception {
        Path pcap = dir.resolve("server.pcap");
        int udpA = HostProcesses.freeUdpPort(IP);
        int udpB = HostProcesses.freeUdpPort(IP);
        int oob = HostProcesses.freeTcpPort(IP);
        Process server = processes.start(
                "server",
                HostProcesses.javaCommand(
                        List.of(),
                        "host",
                        "--server",
                        "--forever",
                        "--underlay",
                        IP + ":" + udpA,
                        "--eni-ip",
                        "10.9.0.1",
                        "--peer-eni-ip",
                        "10.9.0.2",
                        "--peer-underlay",
                        IP + ":" + udpB,
                        "--oob-port",
                        String.valueOf(oob),
                        "--connect-timeout",
                        "60",
                        "--capture",
                        pcap.toString()));
        int clientExit = runHere(
                "host",
                "--client",
                "--underlay",
                IP + ":" + udpB,
                "--eni-ip",
                "10.9.0.2",
                "--peer-eni-ip",
                "10.9.0.1",
                "--peer-underlay",
                IP + ":" + udpA,
                "--oob-port",
                String.valueOf(oob),
                "--size",
                "4096",
                "--iterations",
                "100",
                "--connect-timeout",
                "60",
                "--test-timeout",
                "60",
                "--busy-poll-us",
                "0");
        assertThat(clientExit).as(out + "\n" + err).isZero();
        // The server prints its counters when the test ends; then it waits for the next client.
        java.util.regex.Pattern counters = java.util.regex.Pattern.compile("counters: tx (\\d+) pkts, rx (\\d+) pkts");
        java.util.regex.Matcher m = counters.matcher("");
        for (int i = 0; i < 600 && !m.reset(processes.output("server")).find(); i++) {
            assertThat(server.waitFor(100, TimeUnit.MILLISECONDS))
                    .as("server still serving")
                    .isFalse();
        }
        assertThat(m.find(0)).as(processes.output("server")).isTrue();
        long packets = Long.parseLong(m.group(1)) + Long.parseLong(m.group(2));
        server.destroy(); // SIGTERM, as Ctrl-C ends a --forever server
        assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // No loss was injected: every packet of the test was seen at the ENI and on the underlay
        // (a late resend may add more); without the pcap's buffered tail the last ones are missing.
        assertThat(pcapPackets(pcap)).as("packets in the capture").isGreaterThanOrEqualTo(2 * packets);
    }

    /** Packets in a pcap file, reading its record headers (a truncated record fails the test). */
    private static long pcapPackets(Path pcap) throws IOException {
        java.nio.ByteBuffer b =
                java.nio.ByteBuffer.wrap(Files.readAllBytes(pcap)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long n = 0;
        int at = 24;
        while (at < b.limit()) {
            assertThat(at + 16).as("whole record header").isLessThanOrEqualTo(b.limit());
            int captured = b.getInt(at + 8);
            assertThat(at + 16 + captured).as("whole record").isLessThanOrEqualTo(b.limit());
            at += 16 + captured;
            n++;
        }
        return n;
    }

    /** Runs tshark; a missing or failing tshark fails the test (./test.sh installs it). */
    private static String tshark(Path dir, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>();
        command.add("tshark");
        command.addAll(List.of(args));
        Path stdout = Files.createTempFile(dir, "tshark", ".out");
        Process p = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("tshark finished").isTrue();
        assertThat(p.exitValue()).as("tshark exit status").isZero();
        return Files.readString(stdout);
    }

    @Test
    void aClientWithoutAServerFailsWithinItsTimeout() {
        long start = System.nanoTime();
        int exit = runHere(
                "host", "--client",
                "--underlay", IP + ":0",
                "--eni-ip", "10.9.0.2",
                "--peer-eni-ip", "10.9.0.1",
                "--peer-underlay", IP + ":9",
                "--oob-port", "9",
                "--connect-timeout", "1");
        assertThat(exit).isEqualTo(3);
        assertThat(err.toString()).contains("cannot reach the server's out-of-band port 127.0.0.1:9 within 1 s");
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(15));
    }

    @Test
    void badArgumentsAreUsageErrors() {
        assertThat(runHere("host", "--server", "--client")).isEqualTo(2);
        assertThat(err.toString()).contains("say --server or --client");
        assertThat(runHere("host", "--server", "--eni-ip", "10.0.0.1")).isEqualTo(2);
        assertThat(err.toString()).contains("--underlay is required");
        assertThat(runHere(
                        "host",
                        "--client",
                        "--underlay",
                        "127.0.0.1:0",
                        "--eni-ip",
                        "10.0.0.1",
                        "--peer-eni-ip",
                        "10.0.0.2",
                        "--peer-underlay",
                        "127.0.0.1:1",
                        "--test",
                        "nope"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("unknown test nope");
        assertThat(runHere(
                        "host",
                        "--client",
                        "--underlay",
                        "127.0.0.1",
                        "--eni-ip",
                        "10.0.0.1",
                        "--peer-eni-ip",
                        "10.0.0.2",
                        "--peer-underlay",
                        "127.0.0.1:1"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("bad address");
        assertThat(runHere(
                        "host",
                        "--client",
                        "--underlay",
                        "127.0.0.1:0",
                        "--eni-ip",
                        "10.0.0.1",
                        "--peer-eni-ip",
                        "10.0.0.2",
                        "--peer-underlay",
                        "127.0.0.1:1",
                        "--loss",
                        "1.5"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--loss must be in [0, 1)");
    }

    @Test
    void theControlPlaneSubcommandsStayUnderHost() {
        assertThat(runHere("host", "--help")).isZero();
        assertThat(out.toString()).contains("--server", "--client", "--peer-underlay", "create", "list", "delete");
    }

    @Test
    void theControlPlaneOptionsBelongToItsSubcommandsOnly() {
        // Running a host talks to no controller and prints no JSON: -o there is an unknown option.
        assertThat(runHere("host", "--help")).isZero();
        assertThat(out.toString()).doesNotContain("--endpoint", "--token", "--output", "--data-dir");
        assertThat(runHere("host", "--server", "-o", "json", "--underlay", "127.0.0.1:0"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Unknown options: '-o', 'json'");
        err.getBuffer().setLength(0);
        assertThat(runHere("host", "--client", "--endpoint", "http://127.0.0.1:1", "--token", "t"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("Unknown option", "--endpoint");
        out.getBuffer().setLength(0);
        assertThat(runHere("host", "list", "--help")).isZero();
        assertThat(out.toString()).contains("--endpoint", "--token", "--output", "--data-dir");
        // The subcommands still take them and reach the API with them.
        err.getBuffer().setLength(0);
        assertThat(runHere("host", "list", "-o", "json", "--endpoint", "http://127.0.0.1:9", "--token", "t"))
                .isEqualTo(1);
        assertThat(err.toString()).startsWith("error: ").doesNotContain("Unknown option");
    }
}
