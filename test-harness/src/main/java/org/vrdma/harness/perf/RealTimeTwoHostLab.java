package org.vrdma.harness.perf;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.EventLoopTimerService;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.runtime.SpinThenBlockStrategy;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * The embedded default: two hosts in this process, each a vSwitch on its own Netty event loop with
 * a real UDP socket on 127.0.0.1 and one vRDMA ENI whose vNIC runs on the same loop. RoCEv2 frames
 * cross a Geneve overlay (one VPC) over real loopback UDP.
 */
public final class RealTimeTwoHostLab implements TwoHostLab {
    private static final int VNI = 100;
    private static final int ENI_ID = 1;
    private static final int IP_A = UnderlayAddress.parseIpv4("10.0.0.1");
    private static final int IP_B = UnderlayAddress.parseIpv4("10.0.0.2");
    private static final long MAC_A = 0x0200_0A00_0001L;
    private static final long MAC_B = 0x0200_0A00_0002L;

    private final NettyRuntime runtime;
    private final EventLoopGroup group;
    private final VSwitchHost hostA;
    private final VSwitchHost hostB;
    private final RdmaEndpoint a;
    private final RdmaEndpoint b;
    private final List<SpinThenBlockStrategy> spinStrategies = new CopyOnWriteArrayList<>();

    public RealTimeTwoHostLab(TransportConfig config, int bufferBytes) throws InterruptedException {
        this(config, bufferBytes, 0);
    }

    /**
     * @param spinNs how long each host's event loop polls after its last event before it sleeps (0:
     *     it sleeps at once, Netty's default); see {@link NettyRuntime#newEventLoopGroup(int, String, long)}
     */
    public RealTimeTwoHostLab(TransportConfig config, int bufferBytes, long spinNs) throws InterruptedException {
        this(config, bufferBytes, spinNs, 1);
    }

    /**
     * @param seed seed of both switches' random streams (RED/ECN, the faults of {@link #faults}),
     *     each named after its switch, so the same seed draws the same faults per switch
     */
    public RealTimeTwoHostLab(TransportConfig config, int bufferBytes, long spinNs, long seed)
            throws InterruptedException {
        runtime = NettyRuntime.best();
        group = runtime.newEventLoopGroup(2, "vrdma-host", spinNs, spinStrategies::add);
        VSwitchHost ha = null;
        VSwitchHost hb = null;
        try {
            ha = VSwitchHost.start(group, runtime, seeded("a", seed));
            hb = VSwitchHost.start(group, runtime, seeded("b", seed));
        } catch (RuntimeException | InterruptedException e) {
            if (ha != null) {
                ha.close();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
        hostA = ha;
        hostB = hb;
        a = attach(hostA, hostB, IP_A, MAC_A, IP_B, "a", config, bufferBytes);
        b = attach(hostB, hostA, IP_B, MAC_B, IP_A, "b", config, bufferBytes);
    }

    private static VSwitchHost.Options seeded(String name, long seed) {
        VSwitchHost.Options o = VSwitchHost.Options.loopback(name);
        return o.withConfig(o.config().withSeed(seed));
    }

    private static RdmaEndpoint attach(
            VSwitchHost host,
            VSwitchHost peer,
            int ip,
            long mac,
            int peerIp,
            String name,
            TransportConfig config,
            int bufferBytes) {
        long peerUnderlay = peer.underlayAddress();
        return call(host, () -> {
            Device device = Device.builder()
                    .name(name)
                    .ipv4(ip)
                    .mac(mac)
                    .attributes(DeviceAttributes.defaults())
                    .config(config)
                    .timers(new EventLoopTimerService(host.eventLoop()))
                    .codec(RealTimeProfile.codec())
                    .allocator(PooledByteBufAllocator.DEFAULT)
                    .frameAllocator(host.underlay().frameAllocator())
                    .sink((frame, nowNs) -> host.vswitch().onEniFrame(ENI_ID, frame))
                    .headroomBytes(host.vswitch().encapsulationHeadroomBytes())
                    .build();
            EniConfig eni = EniConfig.of(ENI_ID, mac, UnderlayAddress.ipv4ToString(ip), VNI);
            host.vswitch().addEni(eni, device);
            host.vswitch().addRemoteRoute(VNI, peerIp, peerUnderlay);
            return new RdmaEndpoint(device, PooledByteBufAllocator.DEFAULT, bufferBytes);
        });
    }

    private static <T> T call(VSwitchHost host, Supplier<T> action) {
        try {
            return host.eventLoop().submit(action::get).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("host " + host + " did not answer in 30 s", e);
        }
    }

    /**
     * Both loops' busy-poll counters: polls that found nothing, spins that ended with a datagram,
     * spins cut short because the loop lost its core, spins that read their datagram directly, spins
     * that ran out and slept, the back-off time begun (ns), the gaps that started back-offs by length
     * (four counts) and the short gaps. All zero without busy polling.
     */
    public long[] busyPollCounters() {
        // A task on each loop orders its earlier counter updates before these reads.
        onA(() -> null);
        onB(() -> null);
        long[] sum = new long[13];
        for (SpinThenBlockStrategy s : spinStrategies) {
            sum[0] += s.spinPolls();
            sum[1] += s.spinHits();
            sum[2] += s.preemptedSpins();
            sum[3] += s.directHits();
            sum[4] += s.expiredSpins();
            sum[5] += s.backoffTotalNs();
            sum[10] += s.shortGaps();
            sum[11] += s.backoffServedNs();
            sum[12] += s.backoffDecays();
            long[] gaps = s.backoffGaps();
            for (int i = 0; i < gaps.length; i++) {
                sum[6 + i] += gaps[i];
            }
        }
        return sum;
    }

    public NettyRuntime runtime() {
        return runtime;
    }

    public VSwitchHost hostA() {
        return hostA;
    }

    public VSwitchHost hostB() {
        return hostB;
    }

    @Override
    public RdmaEndpoint a() {
        return a;
    }

    @Override
    public RdmaEndpoint b() {
        return b;
    }

    @Override
    public <T> T onA(Supplier<T> action) {
        return call(hostA, action);
    }

    @Override
    public <T> T onB(Supplier<T> action) {
        return call(hostB, action);
    }

    @Override
    public boolean await(BooleanSupplier done, long timeoutNs) {
        return awaitWallClock(done, timeoutNs);
    }

    /**
     * Waits in real time for at most {@code timeoutNs}, checking {@code done} after 50 µs, then less
     * and less often (every 2 ms at most): a short run ends promptly, and a long one is not
     * interrupted by thousands of wake-ups of this thread competing with the event loops for the cores.
     */
    public static boolean awaitWallClock(BooleanSupplier done, long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        long parkNs = 50_000;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(parkNs);
            parkNs = Math.min(2_000_000, parkNs * 2);
        }
        return true;
    }

    @Override
    public void faults(FaultConfig data, FaultConfig control) {
        EgressConfig egress = EgressConfig.DEFAULT.withDataFaults(data).withControlFaults(control);
        call(hostA, () -> {
            hostA.vswitch().setUplink(egress);
            return null;
        });
        call(hostB, () -> {
            hostB.vswitch().setUplink(egress);
            return null;
        });
    }

    @Override
    public TransportCounters transportCounters() {
        TransportCounters sum = new TransportCounters();
        onA(() -> {
            a.device.counters().addTo(sum);
            return null;
        });
        onB(() -> {
            b.device.counters().addTo(sum);
            return null;
        });
        return sum;
    }

    @Override
    public long ecnMarks() {
        return onA(() -> hostA.vswitch().uplink().ecnMarked())
                + onB(() -> hostB.vswitch().uplink().ecnMarked());
    }

    @Override
    public long injectedLosses() {
        return onA(() -> hostA.vswitch().uplink().dataLost()
                        + hostA.vswitch().uplink().controlLost())
                + onB(() -> hostB.vswitch().uplink().dataLost()
                        + hostB.vswitch().uplink().controlLost());
    }

    @Override
    public int ipv4A() {
        return IP_A;
    }

    @Override
    public long macA() {
        return MAC_A;
    }

    @Override
    public int ipv4B() {
        return IP_B;
    }

    @Override
    public long macB() {
        return MAC_B;
    }

    @Override
    public String describe() {
        return "real time: 2 hosts in this process, vSwitch + vNIC each, Geneve over UDP on "
                + UnderlayAddress.toString(hostA.underlayAddress()) + " <-> "
                + UnderlayAddress.toString(hostB.underlayAddress()) + " (" + runtime
                + (hostA.gsoActive() ? ", GSO" : "") + (hostA.groActive() ? ", GRO" : "") + ")";
    }

    @Override
    public void close() {
        try {
            onA(() -> {
                a.close();
                return null;
            });
            onB(() -> {
                b.close();
                return null;
            });
        } finally {
            hostA.close();
            hostB.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
