package org.vrdma.verbs;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.VSwitchConfig;
import org.vrdma.vswitch.runtime.EventLoopTimerService;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * An embedded vRDMA host in this JVM: a vSwitch on its own Netty event loop, bound to a real UDP
 * underlay address, with one vRDMA ENI whose vNIC ({@link IbvDevice}) runs on the same loop. Several
 * hosts may run in one JVM; two hosts (in one JVM or in two) reach each other over UDP once each
 * knows the other's ENI address and underlay address ({@link #addPeer}, or {@link QpConnector},
 * which exchanges them).
 *
 * <p>Every object of the device is confined to the host's event loop; the verbs API hands calls to
 * it. Closing the host destroys whatever the application left open, removes the device from {@link
 * IbvDeviceList} and closes the socket.
 */
public final class VerbsHost implements AutoCloseable {
    private static final int ENI_ID = 1;

    /**
     * How to start a host.
     *
     * @param name device name, e.g. {@code vrdma0}
     * @param bindIpv4 underlay address to bind, e.g. 127.0.0.1
     * @param port underlay UDP port, 0 for an ephemeral one
     * @param eniIpv4 the ENI's address in the VPC (dotted quad); the GID is derived from it
     * @param vni the VPC's virtual network identifier; peers must use the same
     * @param transport transport settings of the vNIC (RTO bounds, window, congestion control)
     */
    public record Options(String name, String bindIpv4, int port, String eniIpv4, int vni, TransportConfig transport) {
        /** VPC 100 on 127.0.0.1 with an ephemeral port, RTO between 1 and 2 ms like {@code ./vrdma host}. */
        public static Options loopback(String name, String eniIpv4) {
            return new Options(
                    name,
                    "127.0.0.1",
                    0,
                    eniIpv4,
                    100,
                    TransportConfig.defaults().withRto(1_000_000, 2_000_000));
        }

        /** Copy with another underlay bind address and port. */
        public Options withUnderlay(String ipv4, int udpPort) {
            return new Options(name, ipv4, udpPort, eniIpv4, vni, transport);
        }

        /** Copy with other transport settings. */
        public Options withTransport(TransportConfig t) {
            return new Options(name, bindIpv4, port, eniIpv4, vni, t);
        }
    }

    private final Options options;
    private final EventLoopGroup group;
    private final VSwitchHost host;
    private final HostLoop loop;
    private final IbvDevice device;
    private final int eniIpv4;
    /** Contexts the application opened; confined to the loop. */
    private final List<IbvContext> contexts = new ArrayList<>();

    private boolean closed;

    private VerbsHost(Options options, EventLoopGroup group, VSwitchHost host) {
        this.options = options;
        this.group = group;
        this.host = host;
        this.loop = new HostLoop(host.eventLoop());
        this.eniIpv4 = UnderlayAddress.parseIpv4(options.eniIpv4());
        long mac = derivedMac(eniIpv4);
        Device d = loop.call(() -> {
            Device dev = Device.builder()
                    .name(options.name())
                    .ipv4(eniIpv4)
                    .mac(mac)
                    .attributes(DeviceAttributes.defaults())
                    .config(options.transport())
                    .timers(new EventLoopTimerService(host.eventLoop()))
                    .codec(new RocePacketCodec())
                    .allocator(PooledByteBufAllocator.DEFAULT)
                    .sink((frame, nowNs) -> host.vswitch().onEniFrame(ENI_ID, frame))
                    .build();
            host.vswitch().addEni(EniConfig.of(ENI_ID, mac, options.eniIpv4(), options.vni()), dev);
            dev.asyncEventHandler(this::onAsyncEvent);
            return dev;
        });
        this.device = new IbvDevice(this, d, loop);
    }

    /**
     * Starts a host: binds the underlay socket and attaches the vNIC; the device then appears in
     * {@link IbvDeviceList}.
     *
     * @throws IllegalStateException if the address cannot be bound
     */
    public static VerbsHost start(Options options) {
        return start(options, 1);
    }

    /**
     * As {@link #start(Options)}, with {@code switchSeed} seeding the vSwitch's random streams (RED
     * marking and injected faults of its ports).
     */
    public static VerbsHost start(Options options, long switchSeed) {
        NettyRuntime runtime = NettyRuntime.best();
        EventLoopGroup group = runtime.newEventLoopGroup(1, "vrdma-" + options.name());
        VSwitchHost h = null;
        try {
            h = VSwitchHost.start(
                    group,
                    runtime,
                    new VSwitchHost.Options(
                            options.bindIpv4(),
                            options.port(),
                            VSwitchConfig.of(options.name(), UnderlayAddress.NONE)
                                    .withSeed(switchSeed),
                            true,
                            true));
            VerbsHost vh = new VerbsHost(options, group, h);
            IbvDeviceList.add(vh.device);
            return vh;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shutdown(h, group);
            throw new IllegalStateException("interrupted while starting host " + options.name(), e);
        } catch (RuntimeException e) {
            shutdown(h, group);
            throw e;
        }
    }

    /** The MAC a host derives for an ENI address: 02:00 followed by the four address bytes. */
    public static long derivedMac(int ipv4) {
        return 0x0200_0000_0000L | (ipv4 & 0xFFFF_FFFFL);
    }

    /** This host's vNIC. */
    public IbvDevice device() {
        return device;
    }

    /** The options the host started with. */
    public Options options() {
        return options;
    }

    /** The ENI address (big-endian int). */
    public int eniIpv4() {
        return eniIpv4;
    }

    /** The bound underlay address, {@code a.b.c.d:port}. */
    public String underlayAddress() {
        return UnderlayAddress.toString(host.underlayAddress());
    }

    /**
     * Routes the VPC address {@code peerEniIpv4} to the host at {@code peerUnderlay} ({@code
     * a.b.c.d:port}); what a control plane programs, done by hand.
     */
    public void addPeer(String peerEniIpv4, String peerUnderlay) {
        long underlay = UnderlayAddress.parse(peerUnderlay);
        int ip = UnderlayAddress.parseIpv4(peerEniIpv4);
        loop.call(() -> {
            host.vswitch().addRemoteRoute(options.vni(), ip, underlay);
            return null;
        });
    }

    /** The vNIC's transport counters (packets, retransmissions, timeouts), summed over its QPs. */
    public TransportCounters transportCounters() {
        return loop.call(() -> device.model().counters());
    }

    /** The vSwitch's and the underlay socket's counters, one line. */
    public String switchCounters() {
        return loop.call(() -> {
            var c = host.vswitch().vpcCounters(options.vni());
            StringBuilder sb = new StringBuilder("vSwitch tx " + c.txPackets() + " rx " + c.rxPackets() + " drops");
            for (org.vrdma.vswitch.pipeline.DropReason r : org.vrdma.vswitch.pipeline.DropReason.values()) {
                if (c.drops(r) > 0) {
                    sb.append(' ').append(r).append('=').append(c.drops(r));
                }
            }
            var u = host.underlay();
            sb.append("; UDP sent ")
                    .append(u.datagramsSent())
                    .append(" received ")
                    .append(u.datagramsReceived());
            sb.append(" not writable ").append(u.sendsDroppedNotWritable());
            sb.append(" pending ").append(u.pendingWriteBytes()).append('B');
            sb.append(" send errors ").append(u.sendErrors());
            sb.append(" rcvbuf ").append(host.receiveBufferBytes()).append('B');
            if (u.sendErrors() > 0) {
                sb.append(" (").append(u.lastSendError()).append(')');
            }
            return sb.toString();
        });
    }

    /** Emulates a link on the uplink: rate, buffer, RED/ECN, faults, as {@code egress} says. */
    public void uplink(EgressConfig egress) {
        loop.call(() -> {
            host.vswitch().setUplink(egress);
            return null;
        });
    }

    /** {@code [packets sent, injected losses (data + control), buffer drops, ECN marks]} of the uplink. */
    public long[] uplinkCounters() {
        return loop.call(() -> {
            var u = host.vswitch().uplink();
            return new long[] {u.txPackets(), u.dataLost() + u.controlLost(), u.bufferDrops(), u.ecnMarked()};
        });
    }

    /**
     * Injects faults on this host's uplink, as a lossy underlay would: {@code data} for data packets,
     * {@code control} for ACKs, NAKs and CNPs; seeded by the switch, so a run is repeatable in the
     * packets it drops. {@link FaultConfig#NONE} turns them off.
     */
    public void uplinkFaults(FaultConfig data, FaultConfig control) {
        uplink(EgressConfig.DEFAULT.withDataFaults(data).withControlFaults(control));
    }

    /** Packets the uplink's injected faults dropped so far. */
    public long uplinkInjectedLosses() {
        return loop.call(() ->
                host.vswitch().uplink().dataLost() + host.vswitch().uplink().controlLost());
    }

    /**
     * Sets the underlay socket's receive buffer ({@code SO_RCVBUF}: the kernel doubles the request
     * and caps it at {@code net.core.rmem_max}) and returns the bytes it granted. The host asks for
     * 4 MiB at start; an ordinary user on a stock system gets 425,984.
     */
    public int underlayReceiveBufferBytes(int requestedBytes) {
        return loop.call(() -> host.receiveBufferBytes(requestedBytes));
    }

    /** Queue pairs alive on the device now (a check for leaks). */
    public int liveQueuePairs() {
        return loop.call(() -> {
            int n = 0;
            int max = device.model().attributes().maxQp();
            for (int i = 0; i < max; i++) {
                if (device.model().queuePair(Device.FIRST_QPN + i) != null) {
                    n++;
                }
            }
            return n;
        });
    }

    /** Contexts open now. */
    public int openContexts() {
        return loop.call(contexts::size);
    }

    /** On the loop: an event of the device goes to the context owning its object, or to all. */
    private void onAsyncEvent(org.vrdma.vnic.verbs.AsyncEventType type, Object source) {
        for (IbvContext c : contexts) {
            if (c.onModelEvent(type, source)) {
                return;
            }
        }
    }

    void onContextOpened(IbvContext ctx) {
        contexts.add(ctx);
    }

    void onContextClosed(IbvContext ctx) {
        contexts.remove(ctx);
    }

    /**
     * Destroys every object the application left open (QPs, SRQs, AHs, MRs, CQs, channels, PDs,
     * contexts), removes the device from the list, closes the socket and stops the loop. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        IbvDeviceList.remove(device);
        try {
            loop.call(() -> {
                for (IbvContext c : List.copyOf(contexts)) {
                    c.forceClose();
                }
                device.model().close();
                return null;
            });
        } finally {
            shutdown(host, group);
        }
    }

    private static void shutdown(VSwitchHost h, EventLoopGroup group) {
        try {
            if (h != null) {
                h.close();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return "VerbsHost{" + options.name() + ", ENI " + options.eniIpv4() + ", underlay " + underlayAddress() + '}';
    }
}
