package org.vrdma.shim;

import static org.vrdma.shim.ControlProtocol.*;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.vrdma.shim.VnicControlServer.Response;
import org.vrdma.vnic.verbs.CompletionChannel;
import org.vrdma.vnic.verbs.CompletionQueue;
import org.vrdma.vnic.verbs.Context;
import org.vrdma.vnic.verbs.Device;
import org.vrdma.vnic.verbs.DeviceAttributes;
import org.vrdma.vnic.verbs.MemoryRegion;
import org.vrdma.vnic.verbs.ProtectionDomain;
import org.vrdma.vnic.verbs.VerbsException;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WorkCompletion;

/**
 * One application context: its verbs {@link Context} and the table of handles it may name. Confined
 * to the device thread, except {@link Channel#streamEvents}, which runs on the channel's connection
 * thread and only takes events from a queue.
 */
final class Session {
    private static final Logger LOG = System.getLogger(Session.class.getName());
    /** Events a channel buffers for an application that does not read them; more are dropped. */
    private static final int EVENT_QUEUE = 4096;

    private final VnicControlServer server;
    private final Device device;
    private final Context context;
    private final int pid;
    private final Map<Integer, Object> handles = new HashMap<>();
    private final Map<CompletionQueue, Cq> cqs = new IdentityHashMap<>();
    private final WorkCompletion[] wcs = new WorkCompletion[MAX_POLL];
    private int nextHandle = 1;
    private boolean released;

    Session(final VnicControlServer server, final Device device, final int pid) {
        this.server = server;
        this.device = device;
        this.context = device.open();
        this.pid = pid;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    int pid() {
        return pid;
    }

    /** A completion queue, the application's cookie for it and its events not yet acknowledged. */
    private static final class Cq {
        final CompletionQueue cq;
        final long cookie;
        int unacked;

        Cq(final CompletionQueue cq, final long cookie) {
            this.cq = cq;
            this.cookie = cookie;
        }
    }

    /** A completion channel and, once bound, the connection its events go to. */
    final class Channel {
        final int handle;
        final CompletionChannel channel;
        final long token;
        private final BlockingQueue<Long> events = new ArrayBlockingQueue<>(EVENT_QUEUE);
        private volatile boolean live = true;
        private volatile SocketChannel stream;
        /** Events lost because the application did not read its channel. */
        private long dropped;

        Channel(final int handle, final CompletionChannel channel, final long token) {
            this.handle = handle;
            this.channel = channel;
            this.token = token;
        }

        /** Device thread: one completion event for {@code cq}. */
        void onEvent(final CompletionQueue cq) {
            channel.getEvent(); // the model queues it too; the socket carries it instead
            final Cq entry = cqs.get(cq);
            if (entry == null) {
                return;
            }
            entry.unacked++;
            if (!events.offer(entry.cookie)) {
                dropped++;
            }
        }

        /** Connection thread: writes events until the channel is destroyed or the peer goes away. */
        void streamEvents(final SocketChannel ch) throws IOException {
            stream = ch;
            final ByteBuffer out = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            try {
                while (live && ch.isOpen()) {
                    final Long cookie;
                    try {
                        cookie = events.poll(200, TimeUnit.MILLISECONDS);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    if (cookie == null) {
                        continue;
                    }
                    out.clear();
                    out.putLong(cookie).flip();
                    while (out.hasRemaining()) {
                        ch.write(out);
                    }
                }
            } finally {
                ch.close();
            }
        }

        void shutdown() {
            live = false;
            final SocketChannel s = stream;
            if (s != null) {
                try {
                    s.close();
                } catch (final IOException e) {
                    LOG.log(Level.DEBUG, "closing channel stream", e);
                }
            }
        }
    }

    VnicControlServer.SessionView view() {
        final List<MemoryRegion> mrs = new ArrayList<>();
        int pds = 0;
        int channels = 0;
        for (final Object o : handles.values()) {
            switch (o) {
                case MemoryRegion mr -> mrs.add(mr);
                case ProtectionDomain pd -> pds++;
                case Channel c -> channels++;
                default -> {}
            }
        }
        return new VnicControlServer.SessionView(pid, pds, List.copyOf(mrs), cqs.size(), channels);
    }

    /** Serves one request; never throws for anything the application sent. */
    Response handle(final int op, final ByteBuffer in) {
        if (released) {
            return Response.error(EIO);
        }
        try {
            return switch (op) {
                case QUERY_DEVICE -> queryDevice();
                case QUERY_PORT -> queryPort(in);
                case QUERY_GID -> queryGid(in);
                case ALLOC_PD -> allocPd();
                case DEALLOC_PD -> deallocPd(in);
                case REG_MR -> regMr(in);
                case DEREG_MR -> deregMr(in);
                case CREATE_CHANNEL -> createChannel();
                case DESTROY_CHANNEL -> destroyChannel(in);
                case CREATE_CQ -> createCq(in);
                case DESTROY_CQ -> destroyCq(in);
                case REQ_NOTIFY_CQ -> reqNotifyCq(in);
                case ACK_CQ_EVENTS -> ackCqEvents(in);
                case POLL_CQ -> pollCq(in);
                default -> Response.error(EOPNOTSUPP);
            };
        } catch (final VerbsException e) {
            return Response.error(e.errno().code());
        } catch (final java.nio.BufferUnderflowException e) {
            return Response.error(EINVAL);
        }
    }

    /** Destroys everything the application still holds, then its context. */
    void release() {
        if (released) {
            return;
        }
        released = true;
        final List<Object> all = new ArrayList<>(handles.values());
        handles.clear();
        // Children before parents: CQs, MRs, then PDs and channels.
        for (final Object o : all) {
            if (o instanceof Cq c) {
                quietly(() -> forceDestroyCq(c));
            }
        }
        for (final Object o : all) {
            if (o instanceof MemoryRegion mr) {
                quietly(mr::deregister);
            }
        }
        for (final Object o : all) {
            if (o instanceof ProtectionDomain pd) {
                quietly(pd::deallocate);
            } else if (o instanceof Channel c) {
                quietly(() -> destroyChannel(c));
            }
        }
        cqs.clear();
        quietly(context::close);
    }

    private void quietly(final Runnable r) {
        try {
            r.run();
        } catch (final RuntimeException e) {
            LOG.log(Level.WARNING, "pid " + pid + ": cleanup step failed", e);
        }
    }

    // ---------------------------------------------------------------- handles

    private int put(final Object o) {
        while (nextHandle == 0 || handles.containsKey(nextHandle)) {
            nextHandle++;
        }
        final int h = nextHandle++;
        handles.put(h, o);
        return h;
    }

    private <T> T get(final int handle, final Class<T> type) {
        final Object o = handles.get(handle);
        if (!type.isInstance(o)) {
            throw new VerbsException(org.vrdma.vnic.verbs.Errno.EINVAL, "no such " + type.getSimpleName());
        }
        return type.cast(o);
    }

    // ---------------------------------------------------------------- requests

    private Response queryDevice() {
        final DeviceAttributes a = context.queryDevice();
        final ByteBuffer b = Response.body(DEVICE_ATTR_BYTES);
        Response.putString(b, device.name(), 64);
        Response.putString(b, ShimInfo.FIRMWARE_VERSION, 64);
        final long guid = ShimInfo.nodeGuid(device.mac());
        b.putLong(guid).putLong(guid);
        b.putLong(a.maxMrSize());
        b.putLong(ShimInfo.PAGE_SIZE_CAP);
        b.putInt(ShimInfo.VENDOR_ID).putInt(ShimInfo.VENDOR_PART_ID).putInt(ShimInfo.HW_VERSION);
        b.putInt(ShimInfo.DEVICE_CAP_FLAGS);
        b.putInt(a.maxQp()).putInt(a.maxQpWr()).putInt(a.maxSge()).putInt(a.maxSge());
        b.putInt(a.maxCq()).putInt(a.maxCqe()).putInt(a.maxMr()).putInt(a.maxPd());
        b.putInt(a.maxQpRdAtom()).putInt(a.maxQpRdAtom() * a.maxQp()).putInt(a.maxQpInitRdAtom());
        b.putInt(a.atomicCap().ordinal());
        b.putInt(a.maxSrq()).putInt(a.maxSrqWr()).putInt(a.maxSrqSge()).putInt(a.maxAh());
        b.putInt(a.maxInlineData());
        b.putShort((short) 1).put((byte) 1).put((byte) ShimInfo.LOCAL_CA_ACK_DELAY);
        return Response.ok(b);
    }

    private Response queryPort(final ByteBuffer in) {
        checkPort(in.getInt());
        final int mtu = context.queryDevice().maxMtu().code();
        final ByteBuffer b = Response.body(PORT_ATTR_BYTES);
        b.putInt(ShimInfo.PORT_STATE_ACTIVE).putInt(mtu).putInt(mtu);
        b.putInt(ShimInfo.GID_TABLE_LENGTH);
        b.putInt(ShimInfo.PORT_CAP_FLAGS);
        b.putInt((int) Math.min(context.queryDevice().maxMrSize(), 0x80000000L));
        b.putShort((short) 1);
        b.put((byte) ShimInfo.ACTIVE_WIDTH_4X).put((byte) ShimInfo.ACTIVE_SPEED_EDR);
        b.put((byte) ShimInfo.PHYS_STATE_LINK_UP).put((byte) ShimInfo.LINK_LAYER_ETHERNET);
        b.putShort((short) 0);
        return Response.ok(b);
    }

    private Response queryGid(final ByteBuffer in) {
        checkPort(in.getInt());
        final int index = in.getInt();
        if (index != 0) {
            return Response.error(EINVAL);
        }
        final ByteBuffer b = Response.body(24);
        b.put(ShimInfo.roceGid(device.ipv4()));
        b.putInt(ShimInfo.GID_TYPE_ROCE_V2).putInt(0);
        return Response.ok(b);
    }

    private Response allocPd() {
        final ProtectionDomain pd = context.allocatePd();
        final ByteBuffer b = Response.body(8);
        b.putInt(put(pd)).putInt(0);
        return Response.ok(b);
    }

    private Response deallocPd(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, ProtectionDomain.class).deallocate();
        handles.remove(h);
        return Response.ok();
    }

    private Response regMr(final ByteBuffer in) {
        final ProtectionDomain pd = get(in.getInt(), ProtectionDomain.class);
        final int access = in.getInt() & ~ACCESS_OPTIONAL_RANGE;
        final long addr = in.getLong();
        final long length = in.getLong();
        final long iova = in.getLong();
        if (length <= 0 || addr == 0) {
            return Response.error(EINVAL);
        }
        final ProcessMemory memory;
        try {
            memory = new ProcessMemory(pid, addr, length);
        } catch (final IllegalArgumentException e) {
            return Response.error(EINVAL);
        }
        memory.probe();
        final MemoryRegion mr = pd.registerMemoryRegion(memory, iova, access);
        final ByteBuffer b = Response.body(16);
        b.putInt(put(mr)).putInt(mr.lkey()).putInt(mr.rkey()).putInt(0);
        return Response.ok(b);
    }

    private Response deregMr(final ByteBuffer in) {
        final int h = in.getInt();
        get(h, MemoryRegion.class).deregister();
        handles.remove(h);
        return Response.ok();
    }

    private Response createChannel() {
        final CompletionChannel cc = context.createCompletionChannel();
        final int h = put(null);
        final Channel ch = new Channel(h, cc, server.newToken());
        handles.put(h, ch);
        cc.handler(ch::onEvent);
        server.registerToken(ch.token, ch);
        final ByteBuffer b = Response.body(16);
        b.putInt(h).putInt(0).putLong(ch.token);
        return Response.ok(b);
    }

    private Response destroyChannel(final ByteBuffer in) {
        final int h = in.getInt();
        destroyChannel(get(h, Channel.class));
        handles.remove(h);
        return Response.ok();
    }

    private void destroyChannel(final Channel ch) {
        ch.channel.destroy();
        ch.channel.handler(null);
        server.forgetToken(ch.token);
        ch.shutdown();
    }

    private Response createCq(final ByteBuffer in) {
        final int cqe = in.getInt();
        final int channelHandle = in.getInt();
        final int vector = in.getInt();
        in.getInt();
        final long cookie = in.getLong();
        if (vector != 0) {
            return Response.error(EINVAL);
        }
        final Channel channel = channelHandle == 0 ? null : get(channelHandle, Channel.class);
        final CompletionQueue cq = context.createCompletionQueue(cqe, channel == null ? null : channel.channel);
        final Cq entry = new Cq(cq, cookie);
        cqs.put(cq, entry);
        final ByteBuffer b = Response.body(8);
        b.putInt(put(entry)).putInt(cq.capacity());
        return Response.ok(b);
    }

    private Response destroyCq(final ByteBuffer in) {
        final int h = in.getInt();
        destroyCq(get(h, Cq.class));
        handles.remove(h);
        return Response.ok();
    }

    private void destroyCq(final Cq c) {
        c.cq.destroy();
        cqs.remove(c.cq);
    }

    /** Cleanup: an application that died cannot acknowledge its events any more. */
    private void forceDestroyCq(final Cq c) {
        if (c.unacked > 0) {
            c.cq.ackEvents(c.unacked);
            c.unacked = 0;
        }
        c.cq.destroy();
        cqs.remove(c.cq);
    }

    private Response reqNotifyCq(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        c.cq.requestNotify(in.getInt() != 0);
        return Response.ok();
    }

    private Response ackCqEvents(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        final int n = in.getInt();
        c.cq.ackEvents(n);
        c.unacked -= n;
        return Response.ok();
    }

    private Response pollCq(final ByteBuffer in) {
        final Cq c = get(in.getInt(), Cq.class);
        final int max = Math.max(0, Math.min(in.getInt(), MAX_POLL));
        final int n = c.cq.poll(wcs, max);
        final ByteBuffer b = Response.body(8 + n * WC_BYTES);
        b.putInt(n).putInt(0);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            b.putLong(wc.wrId);
            b.putInt(wc.status.ordinal());
            b.putInt(wcOpcode(wc.opcode));
            b.putInt(wc.vendorErr).putInt(wc.byteLen).putInt(wc.immData);
            b.putInt(wc.qpNum).putInt(wc.srcQp).putInt(wc.wcFlags);
            b.putShort((short) wc.pkeyIndex).putShort((short) 0);
            b.put((byte) 0).put((byte) 0).putShort((short) 0);
        }
        return Response.ok(b);
    }

    /** {@code enum ibv_wc_opcode} value. */
    static int wcOpcode(final WcOpcode op) {
        return switch (op) {
            case SEND -> 0;
            case RDMA_WRITE -> 1;
            case RDMA_READ -> 2;
            case COMP_SWAP -> 3;
            case FETCH_ADD -> 4;
            case RECV -> 128;
            case RECV_RDMA_WITH_IMM -> 129;
        };
    }

    private static void checkPort(final int port) {
        if (port != 1) {
            throw new VerbsException(org.vrdma.vnic.verbs.Errno.EINVAL, "invalid port " + port);
        }
    }
}
