package org.vrdma.vswitch.pipeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.vrdma.runtime.FaultInjector;
import org.vrdma.vswitch.qos.EniShaper;

/**
 * JSON snapshot of a switch's counters: per switch, uplink port, ENI (with its QoS classes) and VPC.
 * Drops appear by reason name, only the non-zero ones. Built on demand (it allocates), on the
 * switch's thread.
 */
public final class VSwitchStats {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String[] CLASS_NAMES = {"rdma", "tcp"};

    private VSwitchStats() {}

    public static ObjectNode snapshot(VSwitch vswitch, long nowNs) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("name", vswitch.config().name());
        root.put("underlay", UnderlayAddress.toString(vswitch.config().underlayAddress()));
        root.put("nowNs", nowNs);
        ObjectNode underlay = root.putObject("underlayCounters");
        underlay.put("txPackets", vswitch.underlayTxPackets());
        underlay.put("txBytes", vswitch.underlayTxBytes());
        underlay.put("rxPackets", vswitch.underlayRxPackets());
        underlay.put("rxBytes", vswitch.underlayRxBytes());
        underlay.put("localDeliveries", vswitch.localDeliveries());
        underlay.put("encapsulationCopies", vswitch.encapsulationCopies());
        underlay.put("arpReplies", vswitch.arpReplies());
        root.set("drops", drops(vswitch.counters()));
        root.set("uplink", port(vswitch.uplink()));
        ArrayNode enis = root.putArray("enis");
        for (Eni eni : vswitch.enis()) {
            ObjectNode e = enis.addObject();
            e.put("id", eni.id());
            e.put("ipv4", UnderlayAddress.ipv4ToString(eni.ipv4()));
            e.put("mac", String.format("%012x", eni.mac()));
            e.put("vni", eni.vni());
            e.put("rdmaEnabled", eni.config().rdmaEnabled());
            e.put("securityGroup", eni.config().securityGroup().name());
            traffic(e, eni.counters());
            e.set("egressQos", shaper(eni.egressShaper()));
            e.set("ingressQos", shaper(eni.ingressShaper()));
            if (eni.deliveryPort() != null) {
                e.set("deliveryPort", port(eni.deliveryPort()));
            }
        }
        ArrayNode vpcs = root.putArray("vpcs");
        for (int vni : vswitch.vnis()) {
            ObjectNode v = vpcs.addObject();
            v.put("vni", vni);
            traffic(v, vswitch.vpcCounters(vni));
        }
        return root;
    }

    /** The snapshot as a JSON string. */
    public static String json(VSwitch vswitch, long nowNs) {
        return snapshot(vswitch, nowNs).toString();
    }

    public static ObjectNode port(EgressPort port) {
        ObjectNode p = MAPPER.createObjectNode();
        p.put("name", port.name());
        p.put("rateBps", port.config().rateBps());
        p.put("bufferBytes", port.config().bufferBytes());
        p.put("offeredPackets", port.offeredPackets());
        p.put("txPackets", port.txPackets());
        p.put("txBytes", port.txBytes());
        p.put("queuedBytes", port.queuedBytes());
        p.put("queueHighWaterBytes", port.queueHighWaterBytes());
        p.put("ecnMarked", port.ecnMarked());
        p.put("intStamped", port.intStamped());
        ObjectNode drops = p.putObject("drops");
        putNonZero(drops, DropReason.BUFFER_FULL.name(), port.bufferDrops());
        putNonZero(drops, DropReason.INJECTED_LOSS.name(), port.dataLost() + port.controlLost());
        p.set("dataFaults", faults(port.dataFaults(), port.dataLost()));
        p.set("controlFaults", faults(port.controlFaults(), port.controlLost()));
        return p;
    }

    private static ObjectNode faults(FaultInjector f, long lost) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("judged", f.framesJudged());
        n.put("lost", lost);
        n.put("randomDrops", f.randomDrops());
        n.put("burstDrops", f.burstDrops());
        n.put("duplicates", f.duplicates());
        n.put("reordered", f.reordered());
        return n;
    }

    private static void traffic(ObjectNode into, TrafficCounters c) {
        into.put("txPackets", c.txPackets());
        into.put("txBytes", c.txBytes());
        into.put("rxPackets", c.rxPackets());
        into.put("rxBytes", c.rxBytes());
        into.set("drops", drops(c));
    }

    private static ObjectNode drops(TrafficCounters c) {
        ObjectNode d = MAPPER.createObjectNode();
        for (int i = 0; i < DropReason.COUNT; i++) {
            putNonZero(d, DropReason.of(i).name(), c.drops[i]);
        }
        return d;
    }

    private static ObjectNode shaper(EniShaper s) {
        ObjectNode q = MAPPER.createObjectNode();
        q.put("rateBps", s.config().rateBps());
        for (int c = 0; c < EniShaper.CLASSES; c++) {
            ObjectNode k = q.putObject(CLASS_NAMES[c]);
            k.put("passedPackets", s.passedPackets(c));
            k.put("passedBytes", s.passedBytes(c));
            k.put("queuedPackets", s.queuedPackets(c));
            k.put("droppedPackets", s.droppedPackets(c));
            k.put("droppedBytes", s.droppedBytes(c));
            k.put("queueHighWaterBytes", s.queueHighWaterBytes(c));
        }
        return q;
    }

    private static void putNonZero(ObjectNode n, String key, long v) {
        if (v != 0) {
            n.put(key, v);
        }
    }
}
