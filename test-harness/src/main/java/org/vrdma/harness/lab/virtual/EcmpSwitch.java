package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.InnerFrame;

/**
 * A fabric switch of a virtual lab: underlay frames (outer Ethernet/IPv4/UDP, Geneve, inner frame,
 * as vSwitches send them) are routed by outer destination address to one of the equal-cost ports
 * towards that host, chosen by a hash of the outer UDP source port (the vSwitch's flow hash) and
 * the switch, so a flow keeps its path and flows spread over paths. Ports are {@link FabricPort}s:
 * rate, buffer, RED/ECN, INT stamping, faults. A frame's headers are read once, at the first
 * switch, into its {@link FrameTag}; later switches route by the tag. Allocation-free per frame.
 *
 * <p>With priority flow control ({@link #enablePfc}) frames come in through {@link #ingress(int)},
 * the sink of one ingress port, and are charged to that port's buffer accounting ({@link
 * PfcIngress}) until they leave.
 */
final class EcmpSwitch implements TaggedSink {
    private final String name;
    private final TimerService timers;
    private final SeededRandoms randoms;
    private final int hostBaseIpv4;
    private final int salt;
    private final InnerFrame peek = new InnerFrame();
    private final List<FabricPort> ports = new ArrayList<>();
    private FabricPort[] portArray = new FabricPort[0];
    /**
     * Per destination host: where its candidate ports start in {@link #routePorts} (upper bits) and
     * how many there are (low 8 bits; 0: no route). One small array, and the candidate lists shared
     * (most hosts are reached over the same uplinks), so a route costs no pointer chase.
     */
    private final int[] routes;

    private int[] routePorts = new int[16];
    private int routePortsUsed;

    private long noRouteDrops;
    private long malformedDrops;
    /** Priority flow control, or null. */
    private PfcIngress pfc;

    EcmpSwitch(String name, TimerService timers, SeededRandoms randoms, int hostBaseIpv4, int hosts, int salt) {
        if (hosts >= FrameTag.MAX_HOSTS) {
            throw new IllegalArgumentException("at most " + (FrameTag.MAX_HOSTS - 1) + " hosts, not " + hosts);
        }
        this.name = name;
        this.timers = timers;
        this.randoms = randoms;
        this.hostBaseIpv4 = hostBaseIpv4;
        this.routes = new int[hosts];
        this.salt = salt;
    }

    String name() {
        return name;
    }

    /**
     * Adds a port whose link delays packets by {@code propagationNs}; {@link FabricPort#connect}
     * it to the far end.
     */
    int addPort(EgressConfig config, long propagationNs) {
        int n = ports.size();
        ports.add(new FabricPort(name + ":p" + n, timers, config, randoms, propagationNs, pfc != null));
        portArray = ports.toArray(new FabricPort[0]);
        return n;
    }

    /**
     * Adds a port (PFC on) whose ingress side has {@code headroomBytes} of headroom and, with
     * dynamic thresholds, {@code alphaScale} times the lab's alpha.
     */
    int addPort(EgressConfig config, long propagationNs, long headroomBytes, double alphaScale) {
        int n = addPort(config, propagationNs);
        pfc.addPort(n, headroomBytes, alphaScale);
        ports.get(n).chargeTo(pfc);
        return n;
    }

    void route(int host, int[] candidatePorts) {
        int n = candidatePorts.length;
        if (n == 0 || n > 255) {
            throw new IllegalArgumentException("1..255 candidate ports, not " + n);
        }
        int start = find(candidatePorts);
        if (start < 0) {
            if (routePortsUsed + n > routePorts.length) {
                routePorts = java.util.Arrays.copyOf(routePorts, Math.max(routePorts.length * 2, routePortsUsed + n));
            }
            System.arraycopy(candidatePorts, 0, routePorts, routePortsUsed, n);
            start = routePortsUsed;
            routePortsUsed += n;
        }
        routes[host] = start << 8 | n;
    }

    /** Where the same candidate list is already stored, or -1. */
    private int find(int[] candidatePorts) {
        int n = candidatePorts.length;
        for (int start = 0; start + n <= routePortsUsed; start++) {
            if (java.util.Arrays.equals(routePorts, start, start + n, candidatePorts, 0, n)) {
                return start;
            }
        }
        return -1;
    }

    List<FabricPort> ports() {
        return ports;
    }

    /** Turns priority flow control on; before the first port is added. */
    void enablePfc(PfcIngress ingress) {
        if (!ports.isEmpty()) {
            throw new IllegalStateException("PFC before ports");
        }
        this.pfc = ingress;
    }

    PfcIngress pfc() {
        return pfc;
    }

    /** Where frames arriving on port {@code in}'s link enter the switch (PFC: charged to that port). */
    TaggedSink ingress(int in) {
        if (pfc == null) {
            return this;
        }
        return (frame, tag, nowNs) -> onFrameFrom(frame, tag, in, nowNs);
    }

    @Override
    public void onFrame(ByteBuf frame, long tag, long nowNs) {
        if (tag == FrameTag.UNTAGGED) {
            tag = FrameTag.read(frame, hostBaseIpv4, peek);
        }
        int port = egressPort(tag);
        if (port < 0) {
            frame.release();
            return;
        }
        portArray[port].offer(frame, tag);
    }

    /** A frame from ingress port {@code in} (PFC): routed, charged to the port, queued. */
    private void onFrameFrom(ByteBuf frame, long tag, int in, long nowNs) {
        if (tag == FrameTag.UNTAGGED) {
            tag = FrameTag.read(frame, hostBaseIpv4, peek);
        }
        int port = egressPort(tag);
        if (port < 0) {
            frame.release();
            return;
        }
        if (!pfc.onArrival(in, FrameTag.bytes(tag), nowNs)) {
            frame.release(); // headroom overflow, counted by the accounting
            return;
        }
        portArray[port].offerCharged(frame, tag, in);
    }

    /** The port a tagged frame leaves by, or -1 (malformed or no route: counted, the caller releases it). */
    private int egressPort(long tag) {
        if (tag == FrameTag.MALFORMED) {
            malformedDrops++;
            return -1;
        }
        int host = FrameTag.host(tag);
        int route = host < routes.length ? routes[host] : 0;
        int count = route & 0xFF;
        if (count == 0) {
            noRouteDrops++;
            return -1;
        }
        if (count == 1) {
            return routePorts[route >>> 8];
        }
        int h = (FrameTag.sourcePort(tag) * 0x9E3779B1) ^ salt;
        h ^= h >>> 15;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        return routePorts[(route >>> 8) + (h & 0x7FFFFFFF) % count];
    }

    long noRouteDrops() {
        return noRouteDrops;
    }

    long malformedDrops() {
        return malformedDrops;
    }

    void close() {
        if (pfc != null) {
            pfc.close();
        }
        for (FabricPort p : ports) {
            p.close();
        }
    }
}
