package org.vrdma.vswitch.fabric;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.cc.switching.RedEcnMarker;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vswitch.pipeline.Collector;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.Frames;
import org.vrdma.vswitch.pipeline.Frames.Endpoint;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitch;
import org.vrdma.vswitch.pipeline.VSwitchConfig;
import org.vrdma.wire.Opcode;

/**
 * A 3:1 incast through one top-of-rack port in virtual time: the shared queue builds up to its
 * buffer, RED marks and tail drop act there, the port drains at exactly its rate, every frame is
 * delivered or counted, and frames carry INT records from both hops.
 */
class FabricIncastTest {
    static final long RATE = 10_000_000_000L;
    static final long TOR_BUFFER = 100_000;
    static final int VNI = 77;
    static final int HOSTS = 4;
    static final int FRAMES_PER_SENDER = 150;

    @Test
    void incastIntoOneTorPort() {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(8);
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        FabricSwitch tor = new FabricSwitch("tor", scheduler, scheduler.randoms());
        VSwitch[] hosts = new VSwitch[HOSTS];
        Endpoint[] enis = new Endpoint[HOSTS];
        Collector[] sinks = new Collector[HOSTS];
        List<Long> departuresAtBottleneck = new ArrayList<>();
        for (int i = 0; i < HOSTS; i++) {
            long address = UnderlayAddress.parse("10.1.0." + (i + 1) + ":6081");
            VSwitch vs = new VSwitch(
                    VSwitchConfig.of("h" + i, address).withIntMaxHops(3).withUplink(EgressConfig.of(RATE, 1 << 20)),
                    scheduler,
                    alloc,
                    new FabricUplink(scheduler, tor));
            hosts[i] = vs;
            FrameSink toHost = i == 0
                    ? (frame, now) -> {
                        departuresAtBottleneck.add(now);
                        vs.onUnderlayFrame(frame);
                    }
                    : (frame, now) -> vs.onUnderlayFrame(frame);
            int port = tor.addPort(
                    EgressConfig.of(RATE, TOR_BUFFER).withEcn(new RedEcnMarker(20_000, 80_000, 0.2)), toHost);
            tor.route(UnderlayAddress.ipv4(address), port);
            enis[i] = Endpoint.of(0x02_00_00_00_00_10L + i, "10.0.0." + (i + 1));
            sinks[i] = new Collector(false);
            vs.addEni(EniConfig.of(1, enis[i].mac(), "10.0.0." + (i + 1), VNI), sinks[i]);
        }
        for (int i = 0; i < HOSTS; i++) {
            for (int j = 0; j < HOSTS; j++) {
                if (i != j) {
                    hosts[i].addRemoteRoute(VNI, enis[j].ip(), hosts[j].config().underlayAddress());
                }
            }
        }
        int frameBytes = 0;
        for (int s = 1; s < HOSTS; s++) {
            for (int k = 0; k < FRAMES_PER_SENDER; k++) {
                ByteBuf f = Frames.roce(alloc, enis[s], enis[0], Opcode.RC_RDMA_WRITE_MIDDLE, 4000, k);
                frameBytes = f.readableBytes();
                hosts[s].onEniFrame(1, f);
            }
        }
        scheduler.runUntilIdle(1_000_000);

        var bottleneck = tor.port(0);
        int sent = 3 * FRAMES_PER_SENDER;
        assertThat(sinks[0].count() + bottleneck.bufferDrops()).isEqualTo(sent);
        assertThat(bottleneck.bufferDrops()).isPositive();
        assertThat(bottleneck.ecnMarked()).isPositive();
        assertThat(bottleneck.queueHighWaterBytes())
                .isLessThanOrEqualTo(TOR_BUFFER)
                .isGreaterThan(TOR_BUFFER / 2);
        // The port never idles while backlogged: departures are exactly one serialisation time apart.
        int wireBytes = frameBytes + hosts[1].encapsulationHeadroomBytes();
        long serialisationPs = wireBytes * 8L * 1_000_000_000_000L / RATE;
        long span = departuresAtBottleneck.getLast() - departuresAtBottleneck.getFirst();
        long expectedSpan = (departuresAtBottleneck.size() - 1) * serialisationPs / 1000;
        assertThat(span).isBetween(expectedSpan - 1, expectedSpan + 1);
        System.out.printf(
                "incast 3:1 at 10 Gbit/s: delivered %d, dropped %d, ECN marked %d, queue high water %d B%n",
                sinks[0].count(), bottleneck.bufferDrops(), bottleneck.ecnMarked(), bottleneck.queueHighWaterBytes());
        tor.close();
        for (VSwitch vs : hosts) {
            vs.close();
        }
    }

    @Test
    void framesCarryIntRecordsOfEveryHop() {
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(9);
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        FabricSwitch tor = new FabricSwitch("tor", scheduler, scheduler.randoms());
        long addrA = UnderlayAddress.parse("10.1.0.1:6081");
        long addrB = UnderlayAddress.parse("10.1.0.2:6081");
        VSwitch a = new VSwitch(
                VSwitchConfig.of("a", addrA).withIntMaxHops(3).withUplink(EgressConfig.of(25_000_000_000L, 1 << 20)),
                scheduler,
                alloc,
                new FabricUplink(scheduler, tor));
        VSwitch b = new VSwitch(VSwitchConfig.of("b", addrB), scheduler, alloc, new FabricUplink(scheduler, tor));
        tor.route(
                UnderlayAddress.ipv4(addrA),
                tor.addPort(EgressConfig.of(RATE, 1 << 20), (f, n) -> a.onUnderlayFrame(f)));
        tor.route(
                UnderlayAddress.ipv4(addrB),
                tor.addPort(EgressConfig.of(RATE, 1 << 20), (f, n) -> b.onUnderlayFrame(f)));
        Endpoint ea = Endpoint.of(0x02_00_00_00_00_0AL, "10.0.0.1");
        Endpoint eb = Endpoint.of(0x02_00_00_00_00_0BL, "10.0.0.2");
        Collector atB = new Collector();
        a.addEni(EniConfig.of(1, ea.mac(), "10.0.0.1", VNI), new Collector());
        b.addEni(EniConfig.of(1, eb.mac(), "10.0.0.2", VNI), atB);
        a.addRemoteRoute(VNI, eb.ip(), addrB);
        b.addRemoteRoute(VNI, ea.ip(), addrA);
        for (int k = 0; k < 5; k++) {
            a.onEniFrame(1, Frames.roce(alloc, ea, eb, Opcode.RC_SEND_ONLY, 2000, k));
        }
        scheduler.runUntilIdle(10_000);
        assertThat(atB.telemetry).hasSize(5);
        IntTelemetry last = atB.telemetry.get(4);
        assertThat(last.hopCount()).isEqualTo(2);
        assertThat(last.linkRateBps(0)).isEqualTo(25_000_000_000L);
        assertThat(last.linkRateBps(1)).isEqualTo(RATE);
        assertThat(last.timestampNs(1)).isGreaterThan(last.timestampNs(0));
        // The 25G uplink feeds the 10G port faster than it drains: the ToR queue was non-empty.
        assertThat(atB.telemetry.get(0).queueBytes(1)).isPositive();
        tor.close();
        a.close();
        b.close();
    }
}
