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
    /** Per destination host: candidate port numbers. */
    private final int[][] routes;

    private long noRouteDrops;
    private long malformedDrops;

    EcmpSwitch(String name, TimerService timers, SeededRandoms randoms, int hostBaseIpv4, int hosts, int salt) {
        if (hosts >= FrameTag.MAX_HOSTS) {
            throw new IllegalArgumentException("at most " + (FrameTag.MAX_HOSTS - 1) + " hosts, not " + hosts);
        }
        this.name = name;
        this.timers = timers;
        this.randoms = randoms;
        this.hostBaseIpv4 = hostBaseIpv4;
        this.routes = new int[hosts][];
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
        ports.add(new FabricPort(name + ":p" + n, timers, config, randoms, propagationNs));
        portArray = ports.toArray(new FabricPort[0]);
        return n;
    }

    void route(int host, int[] candidatePorts) {
        routes[host] = candidatePorts;
    }

    List<FabricPort> ports() {
        return ports;
    }

    @Override
    public void onFrame(ByteBuf frame, long tag, long nowNs) {
        if (tag == FrameTag.UNTAGGED) {
            tag = FrameTag.read(frame, hostBaseIpv4, peek);
        }
        if (tag == FrameTag.MALFORMED) {
            malformedDrops++;
            frame.release();
            return;
        }
        int host = FrameTag.host(tag);
        int[] candidates = host < routes.length ? routes[host] : null;
        if (candidates == null) {
            noRouteDrops++;
            frame.release();
            return;
        }
        int port;
        if (candidates.length == 1) {
            port = candidates[0];
        } else {
            int h = (FrameTag.sourcePort(tag) * 0x9E3779B1) ^ salt;
            h ^= h >>> 15;
            h *= 0x85EBCA6B;
            h ^= h >>> 13;
            port = candidates[(h & 0x7FFFFFFF) % candidates.length];
        }
        portArray[port].offer(frame, tag);
    }

    long noRouteDrops() {
        return noRouteDrops;
    }

    long malformedDrops() {
        return malformedDrops;
    }

    void close() {
        for (FabricPort p : ports) {
            p.close();
        }
    }
}
