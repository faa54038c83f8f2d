package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.vswitch.capture.PcapCapture;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.wire.Opcode;

/** Counters and their JSON snapshot; pcap captures the switch writes, decoded by tshark. */
class StatsAndCaptureTest {
    static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    static final Endpoint A = Endpoint.of(0x02_00_00_00_00_01L, "10.0.0.1");
    static final Endpoint B = Endpoint.of(0x02_00_00_00_00_02L, "10.0.0.2");
    static final int VNI = 0x1234;
    static final int[] OPCODES = {
        Opcode.RC_SEND_ONLY, Opcode.RC_RDMA_WRITE_ONLY, Opcode.RC_ACKNOWLEDGE, Opcode.RC_RDMA_READ_REQUEST, Opcode.CNP
    };

    @TempDir
    Path dir;

    Lab lab = new Lab(4);
    VSwitch a = lab.add(VSwitchConfig.of("a", HOST_A)
            .withIntMaxHops(2)
            .withUplink(EgressConfig.of(10_000_000_000L, 64 * 1024).withEcn(RedEcnMarker.step(0))));
    VSwitch b = lab.add(VSwitchConfig.of("b", HOST_B));
    Collector atB = new Collector();

    void connect() {
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", VNI), new Collector());
        b.addEni(EniConfig.of(1, B.mac(), "10.0.0.2", VNI), atB);
        a.addRemoteRoute(VNI, "10.0.0.2", HOST_B);
        b.addRemoteRoute(VNI, "10.0.0.1", HOST_A);
    }

    @Test
    void countersAndJsonSnapshot() throws IOException {
        connect();
        for (int i = 0; i < 20; i++) {
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 500, i));
        }
        a.onEniFrame(1, Frames.tcp(lab.alloc, B, A, 80, 10, 1)); // spoofed
        lab.scheduler.runUntilIdle(10_000);

        JsonNode json = new ObjectMapper().readTree(VSwitchStats.json(a, lab.scheduler.nowNs()));
        assertThat(json.get("name").asText()).isEqualTo("a");
        assertThat(json.get("underlay").asText()).isEqualTo("10.1.0.1:6081");
        JsonNode eni = json.get("enis").get(0);
        assertThat(eni.get("txPackets").asLong()).isEqualTo(20);
        assertThat(eni.get("drops").get("SPOOFED_SOURCE").asLong()).isEqualTo(1);
        assertThat(eni.get("egressQos").get("rdma").get("passedPackets").asLong())
                .isEqualTo(20);
        assertThat(json.get("drops").get("SPOOFED_SOURCE").asLong()).isEqualTo(1);
        JsonNode uplink = json.get("uplink");
        assertThat(uplink.get("txPackets").asLong()).isEqualTo(20);
        assertThat(uplink.get("intStamped").asLong()).isEqualTo(20);
        // Step marking at 0 bytes: every packet that found a queue was marked.
        assertThat(uplink.get("ecnMarked").asLong()).isEqualTo(19);
        assertThat(uplink.get("queueHighWaterBytes").asLong()).isPositive();
        JsonNode vpc = json.get("vpcs").get(0);
        assertThat(vpc.get("vni").asInt()).isEqualTo(VNI);
        assertThat(vpc.get("txPackets").asLong()).isEqualTo(20);
        assertThat(json.get("underlayCounters").get("txPackets").asLong()).isEqualTo(20);

        JsonNode atBJson = VSwitchStats.snapshot(b, 0);
        assertThat(atBJson.get("enis").get(0).get("rxPackets").asLong()).isEqualTo(20);
        assertThat(atBJson.get("vpcs").get(0).get("rxPackets").asLong()).isEqualTo(20);
        assertThat(atB.count()).isEqualTo(20);
        assertThat(Frames.ecn(io.netty.buffer.Unpooled.wrappedBuffer(atB.frames.get(19))))
                .isEqualTo(0b11);
        lab.close();
    }

    @Test
    void capturesDecodeInTsharkAsGeneveThenRoce() throws Exception {
        connect();
        a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 8, 0)); // before the capture
        Path underlayFile = dir.resolve("underlay.pcap");
        Path innerFile = dir.resolve("inner.pcap");
        long epoch = 1_700_000_000_000_000_000L;
        PcapCapture underlay = PcapCapture.create(underlayFile, EnumSet.of(CapturePoint.UNDERLAY_TX), epoch);
        PcapCapture innerRx = PcapCapture.create(innerFile, EnumSet.of(CapturePoint.ENI_RX), epoch);
        PcapCapture underlayRx =
                PcapCapture.create(dir.resolve("rx.pcap"), EnumSet.of(CapturePoint.UNDERLAY_RX), epoch);
        lab.scheduler.runUntilIdle(1000);
        a.capture(underlay);
        b.capture((point, frame, nowNs) -> {
            innerRx.onPacket(point, frame, nowNs);
            underlayRx.onPacket(point, frame, nowNs);
        });
        for (int i = 0; i < OPCODES.length; i++) {
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, OPCODES[i], 40 + i, 0x100 + i));
        }
        lab.scheduler.runUntilIdle(10_000);
        a.capture(null);
        b.capture(null);
        a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 8, 9)); // after the capture
        lab.scheduler.runUntilIdle(1000);
        underlay.close();
        innerRx.close();
        underlayRx.close();
        assertThat(underlay.packets()).isEqualTo(OPCODES.length);
        assertThat(innerRx.packets()).isEqualTo(OPCODES.length);
        assertThat(underlayRx.packets()).isEqualTo(OPCODES.length);

        for (Path file : List.of(underlayFile, dir.resolve("rx.pcap"))) {
            List<String[]> rows = tshark(
                    file,
                    "frame.protocols",
                    "geneve.vni",
                    "udp.dstport",
                    "infiniband.bth.opcode",
                    "infiniband.bth.psn",
                    "ip.checksum.status",
                    "_ws.malformed");
            assertThat(rows).hasSize(OPCODES.length);
            for (int i = 0; i < OPCODES.length; i++) {
                String[] f = rows.get(i);
                assertThat(f[0]).startsWith("eth:ethertype:ip:udp:geneve:eth:ethertype:ip:udp:infiniband");
                assertThat(f[1]).isEqualTo(String.format("0x%06x", VNI));
                assertThat(f[2]).isEqualTo("6081,4791");
                assertThat(f[3]).isEqualTo(Integer.toString(OPCODES[i]));
                assertThat(f[4]).isEqualTo(Integer.toString(0x100 + i));
                assertThat(f[5]).as("outer and inner IPv4 checksums").isEqualTo("1,1");
                assertThat(f[6]).isEmpty();
            }
        }
        List<String[]> inner = tshark(innerFile, "frame.protocols", "infiniband.bth.opcode", "ip.src", "ip.dst");
        assertThat(inner).hasSize(OPCODES.length);
        assertThat(inner.get(0)[0]).startsWith("eth:ethertype:ip:udp:infiniband");
        assertThat(inner.get(0)[2]).isEqualTo("10.0.0.1");
        assertThat(inner.get(0)[3]).isEqualTo("10.0.0.2");
        lab.close();
    }

    private List<String[]> tshark(Path pcap, String... fields) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                "tshark",
                "-r",
                pcap.toString(),
                "-o",
                "ip.check_checksum:TRUE",
                "-T",
                "fields",
                "-E",
                "separator=|",
                "-E",
                "occurrence=a",
                "-E",
                "aggregator=,"));
        for (String f : fields) {
            command.add("-e");
            command.add(f);
        }
        Path out = Files.createTempFile(dir, "tshark", ".out");
        Path err = Files.createTempFile(dir, "tshark", ".err");
        Process p;
        try {
            p = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
        } catch (IOException e) {
            fail("tshark is not installed: run ./test.sh, which installs it (or apt-get install tshark). "
                    + e.getMessage());
            throw e;
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("tshark did not finish: " + command);
        }
        assertThat(p.exitValue()).as("tshark: %s", Files.readString(err)).isZero();
        return Files.readString(out, StandardCharsets.UTF_8)
                .lines()
                .filter(l -> !l.isBlank())
                .map(l -> l.split("\\|", -1))
                .toList();
    }
}
