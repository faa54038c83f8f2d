package org.vrdma.vswitch.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.wire.Opcode;

/**
 * The proof that the wire format is the real one: Wireshark's dissectors decode a capture of every
 * opcode as Geneve, then IPv4, UDP and InfiniBand, with our opcodes, QPNs, PSNs and VNIs.
 */
class TsharkDecodesCaptureTest {
    private static final String ICRC_STATUS_FIELD = "infiniband.invariant.crc.status";
    private static final long TSHARK_TIMEOUT_SECONDS = 120;

    @TempDir
    Path dir;

    @Test
    void tsharkDecodesEveryOpcodeThroughGenevePortsAndInfiniband() throws Exception {
        int[] opcodes = IntStream.range(0, 256).filter(Opcode::isValid).toArray();
        Path pcap = dir.resolve("overlay.pcap");
        List<OverlayCapture.Sent> sent = OverlayCapture.write(pcap, opcodes);

        boolean tsharkChecksIcrc = tshark("-G", "fields").contains("\t" + ICRC_STATUS_FIELD + "\t");
        List<String> args = new ArrayList<>(List.of(
                "-r", pcap.toString(),
                "-o", "ip.check_checksum:TRUE",
                "-T", "fields",
                "-E", "separator=|",
                "-E", "occurrence=a",
                "-E", "aggregator=,"));
        for (String field : List.of(
                "frame.time_epoch",
                "frame.protocols",
                "geneve.vni",
                "ip.checksum.status",
                "udp.dstport",
                "infiniband.bth.opcode",
                "infiniband.bth.destqp",
                "infiniband.bth.psn",
                "infiniband.bth.padcnt",
                "infiniband.invariant.crc",
                "_ws.col.Info",
                "_ws.malformed",
                "_ws.expert",
                tsharkChecksIcrc ? ICRC_STATUS_FIELD : "frame.number")) {
            args.add("-e");
            args.add(field);
        }
        List<String> lines = tshark(args.toArray(String[]::new))
                .lines()
                .filter(l -> !l.isBlank())
                .toList();

        assertThat(lines).hasSize(sent.size());
        for (int i = 0; i < sent.size(); i++) {
            OverlayCapture.Sent s = sent.get(i);
            String[] f = lines.get(i).split("\\|", -1);
            String what = Opcode.name(s.opcode()) + ": " + lines.get(i);
            assertThat(f[0]).as(what).isEqualTo(epochSeconds(OverlayCapture.FIRST_TIMESTAMP_NS + i * 1_000L));
            assertThat(f[1]).as(what).startsWith("eth:ethertype:ip:udp:geneve:eth:ethertype:ip:udp:infiniband");
            assertThat(f[2]).as(what).isEqualTo(String.format("0x%06x", s.vni()));
            assertThat(f[3])
                    .as("outer and inner IPv4 header checksums good: " + what)
                    .isEqualTo("1,1");
            assertThat(f[4]).as(what).isEqualTo("6081,4791");
            assertThat(f[5]).as(what).isEqualTo(Integer.toString(s.opcode()));
            assertThat(f[6]).as(what).isEqualTo(String.format("0x%06x", s.destQp()));
            assertThat(f[7]).as(what).isEqualTo(Integer.toString(s.psn()));
            assertThat(f[8]).as(what).isEqualTo(Integer.toString(-s.payloadBytes() & 3));
            if (Opcode.isCnp(s.opcode())) {
                // Wireshark has no CNP dissector: it shows the opcode number only.
                assertThat(f[10]).as(what).startsWith("Unknown OpCode");
            } else {
                // Wireshark reads the 4 bytes big-endian; the ICRC is stored little-endian.
                assertThat(f[9]).as(what).isEqualTo(String.format("0x%08x", Integer.reverseBytes(s.icrc())));
                assertThat(f[10].replace("QP=", " QP=").replaceAll("\\s+", " "))
                        .as(what)
                        .startsWith(Opcode.name(s.opcode()) + " QP=");
            }
            assertThat(f[11]).as("malformed: " + what).isEmpty();
            assertThat(f[12]).as("expert info: " + what).isEmpty();
            if (tsharkChecksIcrc && !Opcode.isCnp(s.opcode())) {
                assertThat(f[13]).as("ICRC status good: " + what).isEqualTo("1");
            }
        }
    }

    private static String epochSeconds(long ns) {
        return String.format("%d.%09d", ns / 1_000_000_000L, ns % 1_000_000_000L);
    }

    /** Runs tshark and returns its standard output; fails the test if tshark is missing or fails. */
    private String tshark(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("tshark");
        command.addAll(List.of(args));
        Path stdout = Files.createTempFile(dir, "tshark", ".out");
        Path stderr = Files.createTempFile(dir, "tshark", ".err");
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile())
                    .start();
        } catch (IOException e) {
            fail("tshark is not installed: run ./test.sh, which installs it" + " (or apt-get install tshark). "
                    + e.getMessage());
            throw e;
        }
        if (!process.waitFor(TSHARK_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("tshark did not finish in " + TSHARK_TIMEOUT_SECONDS + " s: " + command);
        }
        String err = Files.readString(stderr, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("tshark %s failed: %s", command, err).isZero();
        return Files.readString(stdout, StandardCharsets.UTF_8);
    }
}
