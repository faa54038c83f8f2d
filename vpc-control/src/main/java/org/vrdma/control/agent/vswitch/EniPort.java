package org.vrdma.control.agent.vswitch;

import io.netty.buffer.ByteBuf;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * The vSwitch side of an attached ENI: frames sent here enter the switch as the ENI's, on the
 * switch's event loop (so any thread may send).
 */
public final class EniPort {
    private final VSwitchHost host;
    private final int portId;
    private final String eniId;

    EniPort(VSwitchHost host, int portId, String eniId) {
        this.host = host;
        this.portId = portId;
        this.eniId = eniId;
    }

    /** The control plane's ENI id. */
    public String eniId() {
        return eniId;
    }

    /** The vSwitch's port id of the ENI. */
    public int portId() {
        return portId;
    }

    public VSwitchHost host() {
        return host;
    }

    /** Sends an inner Ethernet frame from the ENI; the switch owns {@code frame} from here on. */
    public void send(ByteBuf frame) {
        try {
            if (host.eventLoop().inEventLoop()) {
                // A vNIC on the switch's own loop: no task per frame.
                host.vswitch().onEniFrame(portId, frame);
                return;
            }
            host.execute(vs -> vs.onEniFrame(portId, frame));
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    /**
     * Sends a copy of {@code frame}, placed behind the switch's encapsulation headroom in a pooled
     * direct buffer so the switch encapsulates it without another copy.
     */
    public void send(byte[] frame) {
        byte[] copy = frame.clone();
        host.execute(vs -> {
            int headroom = vs.encapsulationHeadroomBytes();
            ByteBuf buf = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(headroom + copy.length);
            buf.writerIndex(headroom).readerIndex(headroom);
            buf.writeBytes(copy);
            vs.onEniFrame(portId, buf);
        });
    }
}
