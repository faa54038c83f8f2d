package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.collection.LongObjectHashMap;
import org.vrdma.runtime.VirtualTimeScheduler;

/**
 * Virtual-time test bed: vSwitches whose underlay ports hand datagrams straight to the destination
 * switch (source address = the sender's underlay address). Datagrams to unknown addresses are
 * released and counted.
 */
public final class Lab {
    public final VirtualTimeScheduler scheduler;
    public final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final LongObjectHashMap<VSwitch> switches = new LongObjectHashMap<>();
    public long lostToNowhere;

    public Lab(long seed) {
        scheduler = new VirtualTimeScheduler(seed);
    }

    public VSwitch add(VSwitchConfig config) {
        long self = config.underlayAddress();
        VSwitch vs = new VSwitch(config, scheduler, alloc, (datagram, dst) -> route(datagram, self, dst));
        switches.put(self, vs);
        return vs;
    }

    private void route(ByteBuf datagram, long src, long dst) {
        VSwitch to = switches.get(dst);
        if (to == null) {
            lostToNowhere++;
            datagram.release();
            return;
        }
        to.onUnderlayDatagram(datagram, src);
    }

    public void close() {
        for (VSwitch vs : switches.values()) {
            vs.close();
        }
    }
}
