package org.vrdma.vswitch.pipeline;

import org.vrdma.runtime.FrameSink;
import org.vrdma.vswitch.qos.EniShaper;

/**
 * An attached ENI port of a {@link VSwitch}: identity, VPC, switches, meters, counters, the sinks
 * its frames are delivered to (RoCEv2 to the vNIC, TCP/IP to a TAP device when one backs the ENI)
 * and its optional delivery port. Read-only to callers; change it through the switch.
 */
public final class Eni {
    final int id;
    final long mac;
    final int ipv4;
    final int vni;
    final VSwitch.Vpc vpc;
    final FrameSink sink;
    /** Where TCP/IP (non-RoCE) frames go, e.g. a TAP device; null: {@link #sink} gets everything. */
    FrameSink ipSink;
    /** Emulated link toward the vNIC/TAP; null until configured (frames are handed over at once). */
    EgressPort deliveryPort;

    final TrafficCounters counters = new TrafficCounters();
    EniConfig config;
    EniShaper egressShaper;
    EniShaper ingressShaper;

    Eni(EniConfig config, VSwitch.Vpc vpc, FrameSink sink) {
        this.id = config.id();
        this.mac = config.mac();
        this.ipv4 = config.ipv4();
        this.vni = config.vni();
        this.vpc = vpc;
        this.sink = sink;
        this.config = config;
    }

    public int id() {
        return id;
    }

    public long mac() {
        return mac;
    }

    public int ipv4() {
        return ipv4;
    }

    public int vni() {
        return vni;
    }

    public EniConfig config() {
        return config;
    }

    public TrafficCounters counters() {
        return counters;
    }

    /** Meter of what the ENI sends. */
    public EniShaper egressShaper() {
        return egressShaper;
    }

    /** The ENI's delivery port (the emulated link toward its vNIC or TAP), or null when none is configured. */
    public EgressPort deliveryPort() {
        return deliveryPort;
    }

    /** Whether TCP/IP frames go to a sink of their own (a TAP device) rather than the vNIC's. */
    public boolean hasIpSink() {
        return ipSink != null;
    }

    /** Meter of what the ENI receives. */
    public EniShaper ingressShaper() {
        return ingressShaper;
    }
}
