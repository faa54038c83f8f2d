package org.vrdma.harness.lab.virtual;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EgressPort;
import org.vrdma.vswitch.pipeline.UnderlayPort;

/**
 * A fabric switch of a virtual lab: underlay frames (outer Ethernet/IPv4/UDP, Geneve, inner frame,
 * as vSwitches send them) are routed by outer destination address to one of the equal-cost ports
 * towards that host, chosen by a hash of the outer UDP source port (the vSwitch's flow hash) and
 * the switch, so a flow keeps its path and flows spread over paths. Ports are vswitch {@link
 * EgressPort}s: rate, buffer, RED/ECN, INT stamping, faults. Allocation-free per frame.
 */
final class EcmpSwitch implements FrameSink {
    private final String name;
    private final TimerService timers;
    private final SeededRandoms randoms;
    private final int hostBaseIpv4;
    private final int salt;
    private final List<EgressPort> ports = new ArrayList<>();
    private EgressPort[] portArray = new EgressPort[0];
    /** Per destination host: candidate port numbers. */
    private int[][] routes;

    private long noRouteDrops;
    private long malformedDrops;

    EcmpSwitch(String name, TimerService timers, SeededRandoms randoms, int hostBaseIpv4, int hosts, int salt) {
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

    int addPort(EgressConfig config, FrameSink out) {
        int n = ports.size();
        ports.add(new EgressPort(name + ":p" + n, timers, config, randoms, UnderlayPort.OUTER_HEADERS_BYTES, out));
        portArray = ports.toArray(new EgressPort[0]);
        return n;
    }

    void route(int host, int[] candidatePorts) {
        routes[host] = candidatePorts;
    }

    List<EgressPort> ports() {
        return ports;
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        int start = frame.readerIndex();
        if (frame.readableBytes() < UnderlayPort.OUTER_HEADERS_BYTES || frame.getUnsignedShort(start + 12) != 0x0800) {
            malformedDrops++;
            frame.release();
            return;
        }
        int host = frame.getInt(start + 30) - hostBaseIpv4;
        int[] candidates = host >= 0 && host < routes.length ? routes[host] : null;
        if (candidates == null) {
            noRouteDrops++;
            frame.release();
            return;
        }
        int port;
        if (candidates.length == 1) {
            port = candidates[0];
        } else {
            int h = (frame.getUnsignedShort(start + 34) * 0x9E3779B1) ^ salt;
            h ^= h >>> 15;
            h *= 0x85EBCA6B;
            h ^= h >>> 13;
            port = candidates[(h & 0x7FFFFFFF) % candidates.length];
        }
        portArray[port].offer(frame);
    }

    long noRouteDrops() {
        return noRouteDrops;
    }

    long malformedDrops() {
        return malformedDrops;
    }

    void close() {
        for (EgressPort p : ports) {
            p.close();
        }
    }
}
