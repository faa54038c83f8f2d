package org.vrdma.control.agent.vswitch;

import io.netty.buffer.PooledByteBufAllocator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.vrdma.control.agent.EniConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vnic.transport.RocePacketCodec;
import org.vrdma.vnic.transport.TransportConfig;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.EventLoopTimerService;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * Puts a vNIC on every vRDMA ENI the control plane places on a host: a verbs {@link Device} with
 * the ENI's IP and MAC, running on the vSwitch's event loop, whose frames go through the ENI's port.
 * Applications reach it with {@link #device(String)} and use it only from that event loop.
 */
public final class VnicAttachments implements EniAttachmentFactory {
    private final VSwitchHost host;
    private final TransportConfig config;
    private final Map<String, Device> devices = new ConcurrentHashMap<>();

    public VnicAttachments(VSwitchHost host, TransportConfig config) {
        this.host = host;
        this.config = config;
    }

    /** The vNIC on the ENI with this control-plane id, or null while it is not attached. */
    public Device device(String eniId) {
        return devices.get(eniId);
    }

    @Override
    public EniAttachment attach(EniConfig eni) {
        if (!eni.vrdma()) {
            // An ENI without vRDMA carries no RDMA traffic: nothing to attach, frames are dropped.
            return () -> (frame, nowNs) -> frame.release();
        }
        return new VnicAttachment(eni);
    }

    private final class VnicAttachment implements EniAttachment {
        private final EniConfig eni;
        private final Device device;
        private volatile EniPort port;

        VnicAttachment(EniConfig eni) {
            this.eni = eni;
            FrameSink toSwitch = (frame, nowNs) -> {
                EniPort p = port;
                if (p == null) {
                    frame.release();
                } else {
                    p.send(frame);
                }
            };
            this.device = Device.builder()
                    .name("vrdma-" + eni.id())
                    .ipv4(UnderlayAddress.parseIpv4(eni.ip()))
                    .mac(VSwitchMapping.mac(eni.mac()))
                    .attributes(DeviceAttributes.defaults())
                    .config(config)
                    .timers(new EventLoopTimerService(host.eventLoop()))
                    .codec(new RocePacketCodec())
                    .allocator(PooledByteBufAllocator.DEFAULT)
                    .sink(toSwitch)
                    .build();
        }

        @Override
        public FrameSink sink() {
            return device;
        }

        @Override
        public void attached(EniPort port) {
            this.port = port;
            devices.put(eni.id(), device);
        }

        @Override
        public void detached() {
            devices.remove(eni.id(), device);
            port = null;
        }
    }
}
