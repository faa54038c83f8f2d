package org.vrdma.harness.perf;

import io.netty.buffer.ByteBufAllocator;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.runtime.LinkModel;
import org.vrdma.runtime.VirtualTimeScheduler;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;

/** Two vNICs joined by modelled links in virtual time: deterministic for a seed. */
public final class VirtualTwoHostLab implements TwoHostLab {
    private static final int IP_A = 0x0A00_0001;
    private static final int IP_B = 0x0A00_0002;
    private static final long MAC_A = 0x0200_0000_000AL;
    private static final long MAC_B = 0x0200_0000_000BL;

    private final VirtualTimeScheduler scheduler;
    private final LinkConfig link;
    private final LinkModel ab;
    private final LinkModel ba;
    private final RdmaEndpoint a;
    private final RdmaEndpoint b;

    public VirtualTwoHostLab(
            long seed, LinkConfig link, TransportConfig config, ByteBufAllocator allocator, int bufferBytes) {
        this.scheduler = new VirtualTimeScheduler(seed);
        this.link = link;
        LinkModel[] links = new LinkModel[2];
        Device da = device("a", IP_A, MAC_A, config, allocator, (f, t) -> links[0].send(f));
        Device db = device("b", IP_B, MAC_B, config, allocator, (f, t) -> links[1].send(f));
        ab = new LinkModel(scheduler, link, scheduler.random("link:a->b"), db);
        ba = new LinkModel(scheduler, link, scheduler.random("link:b->a"), da);
        links[0] = ab;
        links[1] = ba;
        a = new RdmaEndpoint(da, allocator, bufferBytes);
        b = new RdmaEndpoint(db, allocator, bufferBytes);
    }

    private Device device(
            String name,
            int ip,
            long mac,
            TransportConfig config,
            ByteBufAllocator allocator,
            org.vrdma.runtime.FrameSink sink) {
        return Device.builder()
                .name(name)
                .ipv4(ip)
                .mac(mac)
                .attributes(DeviceAttributes.defaults())
                .config(config)
                .timers(scheduler)
                .codec(new RocePacketCodec())
                .allocator(allocator)
                .sink(sink)
                .build();
    }

    public VirtualTimeScheduler scheduler() {
        return scheduler;
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
        return action.get();
    }

    @Override
    public <T> T onB(Supplier<T> action) {
        return action.get();
    }

    @Override
    public boolean await(BooleanSupplier done, long timeoutNs) {
        return scheduler.runUntil(done, scheduler.nowNs() + timeoutNs);
    }

    @Override
    public void faults(FaultConfig data, FaultConfig control) {
        // A modelled link does not tell data from control: the data faults apply to every frame.
        ab.faults(data);
        ba.faults(data);
    }

    @Override
    public TransportCounters transportCounters() {
        TransportCounters sum = new TransportCounters();
        a.device.counters().addTo(sum);
        b.device.counters().addTo(sum);
        return sum;
    }

    @Override
    public long ecnMarks() {
        return 0;
    }

    @Override
    public long injectedLosses() {
        return ab.framesLost() + ba.framesLost();
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
        return String.format(
                "virtual time: %.0f Gbit/s links, %.1f us one-way, %d KiB queues",
                link.rateBps() / 1e9, link.propagationDelayNs() / 1e3, link.queueCapacityBytes() / 1024);
    }

    @Override
    public void close() {
        ab.close();
        ba.close();
        a.close();
        b.close();
    }
}
