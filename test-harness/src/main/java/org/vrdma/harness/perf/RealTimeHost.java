package org.vrdma.harness.perf;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vswitch.capture.PcapCapture;
import org.vrdma.vswitch.pipeline.CapturePoint;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.SecurityGroup;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitchConfig;
import org.vrdma.vswitch.pipeline.VSwitchStats;
import org.vrdma.vswitch.qos.QosConfig;
import org.vrdma.vswitch.runtime.EventLoopTimerService;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.tap.TapConfig;
import org.vrdma.vswitch.tap.TapPort;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * One host of a VPC in this process, as a separate process runs it: a vSwitch on its own Netty
 * event loop bound to a real UDP underlay address, one vRDMA ENI with a vNIC on the same loop, and
 * a route to one peer ENI behind another host's underlay address. The peer is another process (or
 * another network namespace); the two meet only over UDP.
 */
public final class RealTimeHost implements AutoCloseable {
    private static final int ENI_ID = 1;

    /** What to bring up. Addresses are dotted quads; underlay addresses are {@code a.b.c.d:port}. */
    public record Spec(
            String name,
            String underlay,
            String eniIpv4,
            long eniMac,
            int vni,
            String peerEniIpv4,
            String peerUnderlay,
            TransportConfig transport,
            int bufferBytes) {}

    private final NettyRuntime runtime;
    private final EventLoopGroup group;
    private final VSwitchHost host;
    private final RdmaEndpoint endpoint;
    private final int eniIpv4;
    private final long eniMac;
    private final int peerEniIpv4;
    private final long peerUnderlay;
    private final List<TapPort> taps = new ArrayList<>();
    private volatile PcapCapture capture;

    /** Binds the underlay socket and attaches the vNIC; throws if the address cannot be bound. */
    public RealTimeHost(Spec spec) throws InterruptedException {
        this(spec, 0);
    }

    /**
     * As {@link #RealTimeHost(Spec)}, with an event loop that polls for {@code spinNs} after its last
     * event before it sleeps (0: it sleeps at once); see {@link NettyRuntime#newEventLoopGroup(int,
     * String, long)}.
     */
    public RealTimeHost(Spec spec, long spinNs) throws InterruptedException {
        this(spec, spinNs, 1);
    }

    /**
     * As {@link #RealTimeHost(Spec, long)}, with {@code switchSeed} seeding the vSwitch's random
     * streams (RED marking and injected faults of its uplink and ENI ports).
     */
    public RealTimeHost(Spec spec, long spinNs, long switchSeed) throws InterruptedException {
        long underlay = UnderlayAddress.parse(spec.underlay());
        long peerUnderlay = UnderlayAddress.parse(spec.peerUnderlay());
        this.eniIpv4 = UnderlayAddress.parseIpv4(spec.eniIpv4());
        int peerIpv4 = UnderlayAddress.parseIpv4(spec.peerEniIpv4());
        this.peerEniIpv4 = peerIpv4;
        this.peerUnderlay = peerUnderlay;
        this.eniMac = spec.eniMac();
        runtime = NettyRuntime.best();
        group = runtime.newEventLoopGroup(1, "vrdma-" + spec.name(), spinNs);
        VSwitchHost h;
        try {
            h = VSwitchHost.start(
                    group,
                    runtime,
                    new VSwitchHost.Options(
                            UnderlayAddress.ipv4ToString(UnderlayAddress.ipv4(underlay)),
                            UnderlayAddress.port(underlay),
                            VSwitchConfig.of(spec.name(), UnderlayAddress.NONE).withSeed(switchSeed),
                            true,
                            true));
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
            throw e;
        }
        host = h;
        try {
            endpoint = call(() -> {
                Device device = Device.builder()
                        .name(spec.name())
                        .ipv4(eniIpv4)
                        .mac(eniMac)
                        .attributes(DeviceAttributes.defaults())
                        .config(spec.transport())
                        .timers(new EventLoopTimerService(host.eventLoop()))
                        .codec(RealTimeProfile.codec())
                        .allocator(PooledByteBufAllocator.DEFAULT)
                        .frameAllocator(host.underlay().frameAllocator())
                        .sink((frame, nowNs) -> host.vswitch().onEniFrame(ENI_ID, frame))
                        .headroomBytes(host.vswitch().encapsulationHeadroomBytes())
                        .build();
                host.vswitch().addEni(EniConfig.of(ENI_ID, eniMac, spec.eniIpv4(), spec.vni()), device);
                host.vswitch().addRemoteRoute(spec.vni(), peerIpv4, peerUnderlay);
                return new RdmaEndpoint(device, PooledByteBufAllocator.DEFAULT, spec.bufferBytes());
            });
        } catch (RuntimeException e) {
            shutdown();
            throw e;
        }
    }

    /**
     * Backs the host's ENI with a TAP device as well: the kernel's TCP/IP traffic on it shares the
     * ENI (and its QoS) with the vNIC's RDMA.
     */
    public TapPort attachTap(TapConfig tap) throws IOException {
        TapPort port = TapPort.open(tap, host.eventLoop(), host.vswitch(), ENI_ID, PooledByteBufAllocator.DEFAULT);
        synchronized (taps) {
            taps.add(port);
        }
        return port;
    }

    /**
     * Adds an ENI with only a TAP device (no vNIC) in VPC {@code vni}, with a route to {@code
     * peerIpv4} of that VPC behind the peer's underlay address.
     */
    public TapPort addTapEni(int eniId, int vni, TapConfig tap, int peerIpv4) throws IOException {
        FrameSink none = (frame, nowNs) -> frame.release(); // a TAP-only ENI has no vNIC: RoCE is dropped
        call(() -> {
            host.vswitch()
                    .addEni(
                            new EniConfig(
                                    eniId,
                                    tap.mac(),
                                    tap.ipv4(),
                                    vni,
                                    false,
                                    SecurityGroup.ALLOW_ALL,
                                    QosConfig.UNLIMITED,
                                    QosConfig.UNLIMITED),
                            none);
            host.vswitch().addRemoteRoute(vni, peerIpv4, peerUnderlay);
            return null;
        });
        TapPort port = TapPort.open(tap, host.eventLoop(), host.vswitch(), eniId, PooledByteBufAllocator.DEFAULT);
        synchronized (taps) {
            taps.add(port);
        }
        return port;
    }

    /** The ENI's egress QoS: what it sends, RDMA and TCP/IP classes. */
    public void egressQos(QosConfig qos) {
        call(() -> {
            host.vswitch()
                    .setQos(ENI_ID, qos, host.vswitch().eni(ENI_ID).config().ingressQos());
            return null;
        });
    }

    /** Faults on the ENI's delivery port, the emulated link toward its vNIC and TAP. */
    public void deliveryFaults(FaultConfig data, FaultConfig control) {
        EgressConfig egress = EgressConfig.DEFAULT.withDataFaults(data).withControlFaults(control);
        call(() -> host.vswitch().setDeliveryPort(ENI_ID, egress));
    }

    /** One JSON line: the switch's counters (VSwitchStats) and each TAP's. */
    public String statsJson() {
        ObjectNode root = call(() -> VSwitchStats.snapshot(host.vswitch(), System.nanoTime()));
        ArrayNode array = root.putArray("taps");
        synchronized (taps) {
            for (TapPort t : taps) {
                ObjectNode n = array.addObject();
                n.put("name", t.name());
                n.put("rxFrames", t.rxFrames());
                n.put("rxBytes", t.rxBytes());
                n.put("rxDropped", t.rxDropped());
                n.put("txFrames", t.txFrames());
                n.put("txBytes", t.txBytes());
                n.put("txErrors", t.txErrors());
            }
        }
        return root.toString();
    }

    /** The MAC a host derives for an ENI address: 02:00 followed by the four address bytes. */
    public static long derivedMac(int ipv4) {
        return 0x0200_0000_0000L | (ipv4 & 0xFFFF_FFFFL);
    }

    public RdmaEndpoint endpoint() {
        return endpoint;
    }

    public int eniIpv4() {
        return eniIpv4;
    }

    public int peerEniIpv4() {
        return peerEniIpv4;
    }

    public long eniMac() {
        return eniMac;
    }

    /** The bound underlay address. */
    public long underlayAddress() {
        return host.underlayAddress();
    }

    /** Runs {@code action} on the host's event loop and returns its result. */
    public <T> T call(Supplier<T> action) {
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
            throw new IllegalStateException("the host's event loop did not answer in 30 s", e);
        }
    }

    /** The host's event loop: the one thread that drives its vSwitch and vNIC. */
    public java.util.concurrent.Executor executor() {
        return host.eventLoop();
    }

    /** Waits until {@code done} holds or {@code timeoutNs} passes; false on timeout. */
    public boolean await(BooleanSupplier done, long timeoutNs) {
        return RealTimeTwoHostLab.awaitWallClock(done, timeoutNs);
    }

    /** Injects faults on this host's uplink: data and control packets leaving it. */
    public void faults(FaultConfig data, FaultConfig control) {
        uplink(EgressConfig.DEFAULT.withDataFaults(data).withControlFaults(control));
    }

    /** Emulates a link on this host's uplink: rate, buffer, RED/ECN, faults, as {@code egress} says. */
    public void uplink(EgressConfig egress) {
        call(() -> {
            host.vswitch().setUplink(egress);
            return null;
        });
    }

    /**
     * What the uplink's emulation did: {@code [packets sent, injected losses (data + control),
     * buffer drops, ECN marks]}.
     */
    public long[] uplinkCounters() {
        return call(() -> {
            var u = host.vswitch().uplink();
            return new long[] {u.txPackets(), u.dataLost() + u.controlLost(), u.bufferDrops(), u.ecnMarked()};
        });
    }

    public TransportCounters transportCounters() {
        TransportCounters c = new TransportCounters();
        call(() -> {
            endpoint.device.counters().addTo(c);
            return null;
        });
        return c;
    }

    /** The underlay's {@link org.vrdma.vswitch.udp.NettyUnderlay#dataPathCounters()}. */
    public long[] underlayCounters() {
        return call(() -> host.underlay().dataPathCounters());
    }

    /**
     * Starts a pcap capture of the underlay (Geneve) and the ENI's inner frames into {@code file};
     * {@link #stopCapture()} ends it. Timestamps are wall-clock time.
     */
    public void startCapture(Path file) {
        PcapCapture c = PcapCapture.create(
                file, EnumSet.allOf(CapturePoint.class), System.currentTimeMillis() * 1_000_000L - System.nanoTime());
        call(() -> {
            host.vswitch().capture(c);
            return null;
        });
        capture = c;
    }

    /** Stops the capture started by {@link #startCapture}, closes its file and returns its packets. */
    public long stopCapture() throws IOException {
        PcapCapture c = capture;
        if (c == null) {
            return 0;
        }
        capture = null;
        call(() -> {
            host.vswitch().capture(null);
            return null;
        });
        c.close();
        if (c.error() != null) {
            throw c.error();
        }
        return c.packets();
    }

    /** Frames this host's uplink dropped by injected faults. */
    public long injectedLosses() {
        return call(() ->
                host.vswitch().uplink().dataLost() + host.vswitch().uplink().controlLost());
    }

    public String describe() {
        return "vSwitch on " + UnderlayAddress.toString(host.underlayAddress()) + " (" + runtime
                + (host.gsoActive() ? ", GSO" : "") + (host.groActive() ? ", GRO" : "") + ")";
    }

    @Override
    public void close() {
        try {
            stopCapture();
        } catch (IOException | RuntimeException e) {
            // the capture's file is as complete as the write error left it
        }
        synchronized (taps) {
            for (TapPort t : taps) {
                t.close();
            }
            taps.clear();
        }
        try {
            call(() -> {
                endpoint.close();
                return null;
            });
        } finally {
            shutdown();
        }
    }

    private void shutdown() {
        host.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
