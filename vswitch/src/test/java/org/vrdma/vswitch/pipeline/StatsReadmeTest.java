package org.vrdma.vswitch.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.wire.Opcode;

/**
 * The JSON stats example in the module README names exactly the fields {@link VSwitchStats} writes
 * (drop reasons aside, which appear only when non-zero): the reference a user reads stays the
 * snapshot a switch prints.
 */
class StatsReadmeTest {
    private static final long HOST_A = UnderlayAddress.parse("10.1.0.1:6081");
    private static final long HOST_B = UnderlayAddress.parse("10.1.0.2:6081");
    private static final Endpoint A = Endpoint.of(0x02_00_00_00_00_01L, "10.0.0.1");
    private static final Endpoint B = Endpoint.of(0x02_00_00_00_00_02L, "10.0.0.2");
    private static final int VNI = 100;

    @Test
    void theReadmeExampleHasTheSnapshotsFields() throws IOException {
        Lab lab = new Lab(1);
        VSwitch a = lab.add(VSwitchConfig.of("a", HOST_A));
        VSwitch b = lab.add(VSwitchConfig.of("b", HOST_B));
        a.addEni(EniConfig.of(1, A.mac(), "10.0.0.1", VNI), new Collector());
        b.addEni(EniConfig.of(1, B.mac(), "10.0.0.2", VNI), new Collector());
        a.addRemoteRoute(VNI, "10.0.0.2", HOST_B);
        b.addRemoteRoute(VNI, "10.0.0.1", HOST_A);
        b.setDeliveryPort(1, EgressConfig.DEFAULT.withDataFaults(FaultConfig.randomLoss(0.1)));
        for (int i = 0; i < 20; i++) {
            a.onEniFrame(1, Frames.roce(lab.alloc, A, B, Opcode.RC_SEND_ONLY, 500, i));
        }
        lab.scheduler.runUntilIdle(10_000);
        JsonNode snapshot = VSwitchStats.snapshot(b, lab.scheduler.nowNs());
        lab.close();

        JsonNode example = new ObjectMapper().readTree(readmeExample());
        assertThat(fields(example, "")).isEqualTo(fields(snapshot, ""));
    }

    /** The first json block under the README's "## JSON stats" heading. */
    private static String readmeExample() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        int section = readme.indexOf("\n## JSON stats");
        assertThat(section).as("vswitch README has a '## JSON stats' section").isNotNegative();
        int start = readme.indexOf("```json\n", section);
        int end = readme.indexOf("\n```", start + 8);
        assertThat(start).isPositive();
        return readme.substring(start + 8, end);
    }

    /** Every field's path, array elements merged as [], drop reasons (keys of "drops") left out. */
    private static TreeSet<String> fields(JsonNode node, String path) {
        TreeSet<String> out = new TreeSet<>();
        if (node.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                String p = path + "." + e.getKey();
                out.add(p);
                if (!e.getKey().equals("drops")) {
                    out.addAll(fields(e.getValue(), p));
                }
            }
        } else if (node.isArray()) {
            for (JsonNode element : node) {
                out.addAll(fields(element, path + "[]"));
            }
        }
        return out;
    }
}
