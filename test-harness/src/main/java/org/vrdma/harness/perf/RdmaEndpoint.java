package org.vrdma.harness.perf;

import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.vrdma.runtime.TimerService;
import org.vrdma.vnic.memory.ByteBufMemory;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.verbs.AccessFlags;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.MemoryRegion;
import org.vrdma.vnic.verbs.Mtu;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.QpCap;
import org.vrdma.vnic.verbs.QpInitAttr;
import org.vrdma.vnic.verbs.QpType;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.RcConnector;

/**
 * One side of a perftest-style connection: a device's context, PD, completion channel and CQ, and
 * one registered buffer, like perftest's {@code ctx}. Confined to the device's thread.
 */
public final class RdmaEndpoint implements AutoCloseable {
    /** Virtual address the buffer is registered at. */
    public static final long BUFFER_VA = 0x1000_0000L;

    final Device device;
    final TimerService timers;
    final Context context;
    final ProtectionDomain pd;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final ByteBufMemory memory;
    final MemoryRegion mr;
    private final List<QueuePair> qps = new ArrayList<>();

    public RdmaEndpoint(Device device, ByteBufAllocator allocator, int bufferBytes) {
        this.device = device;
        this.timers = device.timers();
        this.context = device.open();
        this.pd = context.allocatePd();
        this.channel = context.createCompletionChannel();
        this.cq = context.createCompletionQueue(8192, channel);
        this.memory = ByteBufMemory.allocate(allocator, bufferBytes);
        this.mr = pd.registerMemoryRegion(
                memory,
                BUFFER_VA,
                AccessFlags.LOCAL_WRITE
                        | AccessFlags.REMOTE_WRITE
                        | AccessFlags.REMOTE_READ
                        | AccessFlags.REMOTE_ATOMIC);
    }

    public Device device() {
        return device;
    }

    public MemoryRegion mr() {
        return mr;
    }

    public ByteBufMemory memory() {
        return memory;
    }

    /** Creates an RC QP in RESET on this endpoint's CQ. */
    public QueuePair createRcQp(RecoveryMode mode, int depth) {
        QpInitAttr attr = QpInitAttr.of(QpType.RC, cq);
        attr.recoveryMode = mode;
        attr.cap = new QpCap(depth, depth, 1, 1, 64);
        QueuePair qp = context.createQueuePair(pd, attr);
        qps.add(qp);
        return qp;
    }

    /** RESET → INIT → RTR → RTS towards a peer, as perftest does after its TCP exchange. */
    public static void connect(QueuePair qp, int destQpn, int destIpv4, long destMac, Mtu mtu, int sqPsn, int rqPsn) {
        // Timeout 18 (1.07 s ceiling of the RTO back-off; the RTO itself follows the measured RTT):
        // host processes share CPUs with everything else, and a peer descheduled for a few hundred
        // milliseconds must not exhaust the 7 retries, as it did with perftest's 14 (67 ms) on two
        // busy cores.
        RcConnector.connect(qp, destQpn, destIpv4, destMac, mtu, sqPsn, rqPsn, 18);
    }

    /** Tears down in the order libibverbs requires (QPs, MR, CQ, channel, PD, context, device). */
    @Override
    public void close() {
        channel.handler(null);
        for (QueuePair qp : qps) {
            qp.destroy();
        }
        qps.clear();
        mr.deregister();
        cq.destroy();
        channel.destroy();
        pd.deallocate();
        context.close();
        device.close();
        memory.release();
    }
}
