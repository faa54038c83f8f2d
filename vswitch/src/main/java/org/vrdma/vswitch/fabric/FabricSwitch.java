package org.vrdma.vswitch.fabric;

import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.runtime.FrameSink;
import org.vrdma.runtime.SeededRandoms;
import org.vrdma.runtime.TimerService;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EgressPort;
import org.vrdma.vswitch.pipeline.UnderlayPort;

/**
 * A top-of-rack switch for virtual-time experiments: underlay frames (outer Ethernet/IPv4/UDP,
 * Geneve, inner frame) arrive on {@link #onFrame}, are routed by outer destination IPv4 address and
 * leave through {@link EgressPort}s, the same code as the vSwitch uplink: link rate, buffer, RED/ECN
 * on the inner header, INT records in the Geneve option, faults. Many senders into one port make the
 * shared congestion point of an incast.
 *
 * <p>Ownership: {@link #onFrame} takes the frame; it goes to a port's link or is released. Confined
 * to the scheduler's thread.
 */
public final class FabricSwitch implements FrameSink {
    private final String name;
    private final TimerService timers;
    private final SeededRandoms randoms;
    private final List<EgressPort> ports = new ArrayList<>();
    private final IntObjectHashMap<EgressPort> routes = new IntObjectHashMap<>();
    private long rxPackets;
    private long noRouteDrops;
    private long malformedDrops;

    public FabricSwitch(String name, TimerService timers, SeededRandoms randoms) {
        this.name = name;
        this.timers = timers;
        this.randoms = randoms;
    }

    /**
     * Adds a port whose departing frames go to {@code link} (a host's receive sink, a {@code
     * LinkModel}, another switch).
     *
     * @return the port number
     */
    public int addPort(EgressConfig config, FrameSink link) {
        int number = ports.size();
        ports.add(new EgressPort(
                name + ":port" + number, timers, config, randoms, UnderlayPort.OUTER_HEADERS_BYTES, link));
        return number;
    }

    /** Sends frames for {@code dstIpv4} out of {@code port}. */
    public void route(int dstIpv4, int port) {
        routes.put(dstIpv4, ports.get(port));
    }

    public EgressPort port(int number) {
        return ports.get(number);
    }

    public int portCount() {
        return ports.size();
    }

    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        rxPackets++;
        int start = frame.readerIndex();
        // Ethernet + IPv4 without options + UDP to the Geneve port: what vSwitches send.
        if (frame.readableBytes() < UnderlayPort.OUTER_HEADERS_BYTES
                || frame.getUnsignedShort(start + 12) != 0x0800
                || frame.getUnsignedByte(start + 14) != 0x45
                || frame.getUnsignedByte(start + 23) != 17) {
            malformedDrops++;
            frame.release();
            return;
        }
        EgressPort port = routes.get(frame.getInt(start + 30));
        if (port == null) {
            noRouteDrops++;
            frame.release();
            return;
        }
        port.offer(frame);
    }

    /** Releases everything queued in every port. */
    public void close() {
        for (EgressPort p : ports) {
            p.close();
        }
    }

    public long rxPackets() {
        return rxPackets;
    }

    public long noRouteDrops() {
        return noRouteDrops;
    }

    public long malformedDrops() {
        return malformedDrops;
    }
}
