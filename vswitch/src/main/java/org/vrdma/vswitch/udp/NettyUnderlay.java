package org.vrdma.vswitch.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.collection.LongObjectHashMap;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.vswitch.pipeline.VSwitch;

/**
 * The real-time underlay: one Netty UDP channel carrying a {@link VSwitch}'s Geneve datagrams.
 *
 * <p><b>Send.</b> With GSO, consecutive datagrams of equal size to the same destination are copied
 * into one pooled 64 KB buffer and written as one {@code SegmentedDatagramPacket}: the kernel cuts it
 * into datagrams of the segment size (the last may be shorter) with a single pass through the
 * stack. Without GSO each datagram is written as it is (no copy) and Netty batches them with
 * {@code sendmmsg}. Either way one flush is scheduled per burst, not per datagram.
 *
 * <p><b>Receive.</b> With GRO the kernel hands several datagrams of one flow back in one buffer;
 * Netty's epoll channel splits it into retained slices before {@code channelRead}, so every
 * datagram reaches the switch as its own buffer without a copy. Without GRO, epoll reads with
 * {@code recvmmsg} into slices of one buffer. The sender's address becomes an {@link
 * UnderlayAddress} without allocating.
 *
 * <p>Confined to the channel's event loop; the switch owns what it is given.
 */
public final class NettyUnderlay extends ChannelInboundHandlerAdapter implements UnderlayPort {
    /** Largest GSO send: below the 65507-byte UDP payload limit. */
    static final int MAX_BATCH_BYTES = 65_000;
    /** The kernel's UDP_MAX_SEGMENTS on older kernels. */
    static final int MAX_SEGMENTS = 64;

    private static final boolean INET4_HASH_IS_ADDRESS = inet4HashIsAddress();

    private final boolean gso;
    private final boolean gro;
    private final LongObjectHashMap<InetSocketAddress> addresses = new LongObjectHashMap<>();
    private final Runnable flushTask = this::flushTask;
    private DatagramChannel channel;
    private ByteBufAllocator allocator;
    private VSwitch vswitch;
    private boolean flushScheduled;

    private ByteBuf batch;
    private long batchDestination;
    private int segmentBytes;
    private int segments;
    private boolean batchClosed;

    private long datagramsSent;
    private long gsoSends;
    private long gsoSegments;
    private long sendsDroppedNotWritable;
    private long sendErrors;
    private String lastSendError = "";
    private long datagramsReceived;
    private long groCoalescedDatagrams;
    private long flushes;
    private long readBursts;

    NettyUnderlay(boolean gso, boolean gro) {
        this.gso = gso;
        this.gro = gro;
    }

    void attach(DatagramChannel channel, VSwitch vswitch) {
        this.channel = channel;
        this.allocator = channel.alloc();
        this.vswitch = vswitch;
    }

    public boolean gso() {
        return gso;
    }

    public boolean gro() {
        return gro;
    }

    @Override
    public void send(ByteBuf datagram, long destination) {
        if (channel == null || !channel.isActive()) {
            datagram.release();
            return;
        }
        datagramsSent++;
        if (!gso) {
            if (!channel.isWritable()) {
                sendsDroppedNotWritable++;
                datagram.release();
                return;
            }
            channel.write(new DatagramPacket(datagram, address(destination)), channel.voidPromise());
            scheduleFlush();
            return;
        }
        int bytes = datagram.readableBytes();
        if (batch != null
                && (destination != batchDestination
                        || bytes > segmentBytes
                        || batchClosed
                        || segments == MAX_SEGMENTS
                        || batch.readableBytes() + bytes > MAX_BATCH_BYTES)) {
            writeBatch();
        }
        if (batch == null) {
            batch = allocator.directBuffer(MAX_BATCH_BYTES);
            batchDestination = destination;
            segmentBytes = bytes;
            segments = 0;
            batchClosed = false;
        }
        batch.writeBytes(datagram, datagram.readerIndex(), bytes);
        datagram.release();
        segments++;
        // Only the last segment may be shorter.
        batchClosed = bytes < segmentBytes;
        scheduleFlush();
    }

    private void writeBatch() {
        ByteBuf b = batch;
        batch = null;
        if (!channel.isWritable()) {
            sendsDroppedNotWritable += segments;
            b.release();
            return;
        }
        InetSocketAddress to = address(batchDestination);
        if (segments == 1) {
            channel.write(new DatagramPacket(b, to), channel.voidPromise());
        } else {
            gsoSends++;
            gsoSegments += segments;
            channel.write(
                    new io.netty.channel.epoll.SegmentedDatagramPacket(b, segmentBytes, to), channel.voidPromise());
        }
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            channel.eventLoop().execute(flushTask);
        }
    }

    private void flushTask() {
        // Flushed here, never deferred by re-queuing this task: a re-queued flush was seen not to
        // run (a 1 MiB READ's 256 responses stayed in the channel's outbound buffer while the loop
        // slept in epoll_wait), and every later send only wrote behind the stuck flag.
        flushNow();
    }

    private void flushNow() {
        flushes++;
        flushScheduled = false;
        if (batch != null) {
            writeBatch();
        }
        channel.flush();
    }

    private InetSocketAddress address(long destination) {
        InetSocketAddress a = addresses.get(destination);
        if (a == null) {
            a = toSocketAddress(destination);
            addresses.put(destination, a);
        }
        return a;
    }

    static InetSocketAddress toSocketAddress(long address) {
        int ip = UnderlayAddress.ipv4(address);
        byte[] b = {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip};
        try {
            return new InetSocketAddress(InetAddress.getByAddress(b), UnderlayAddress.port(address));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    static long fromSocketAddress(InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (!(ip instanceof Inet4Address)) {
            return UnderlayAddress.NONE;
        }
        // OpenJDK's Inet4Address hash is the address itself: no array per packet. Checked at start-up.
        int v4 = INET4_HASH_IS_ADDRESS ? ip.hashCode() : toInt(ip.getAddress());
        return UnderlayAddress.of(v4, address.getPort());
    }

    private static int toInt(byte[] b) {
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    private static boolean inet4HashIsAddress() {
        try {
            return InetAddress.getByAddress(new byte[] {10, 20, 30, 40}).hashCode() == 0x0A141E28;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof DatagramPacket packet)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        ByteBuf content = packet.content();
        datagramsReceived++;
        if (gro && content.unwrap() != null) {
            // A slice of a larger read: the kernel coalesced this datagram with others.
            groCoalescedDatagrams++;
        }
        vswitch.onUnderlayDatagram(content, fromSocketAddress(packet.sender()));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        readBursts++;
        // What the switch sent while reading is flushed by the scheduled flush task, after the
        // tasks this read queued (completion handlers) have had their turn to send as well.
        if (!flushScheduled && batch != null) {
            flushNow();
        }
    }

    /** A failed write (its promise is the void one) or read: counted, never silent. */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        sendErrors++;
        lastSendError = String.valueOf(cause.getMessage() == null ? cause : cause.getMessage());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (batch != null) {
            batch.release();
            batch = null;
        }
        super.channelInactive(ctx);
    }

    public long datagramsSent() {
        return datagramsSent;
    }

    /** GSO sends of two or more segments. */
    public long gsoSends() {
        return gsoSends;
    }

    /** Datagrams that left inside GSO sends. */
    public long gsoSegments() {
        return gsoSegments;
    }

    /** Underlay I/O errors reported by the channel (failed sends, e.g. EINVAL or EMSGSIZE). */
    public long sendErrors() {
        return sendErrors;
    }

    /** The message of the last underlay I/O error, empty if none. */
    public String lastSendError() {
        return lastSendError;
    }

    /** Bytes written to the channel and not yet handed to the kernel. */
    public long pendingWriteBytes() {
        var out = channel == null ? null : channel.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    public long sendsDroppedNotWritable() {
        return sendsDroppedNotWritable;
    }

    public long datagramsReceived() {
        return datagramsReceived;
    }

    /** Flushes of the channel: each is one {@code sendmmsg} (or a few, for long bursts). */
    public long flushes() {
        return flushes;
    }

    /** Wake-ups that read at least one datagram (each ends with {@code channelReadComplete}). */
    public long readBursts() {
        return readBursts;
    }

    /** Received datagrams that arrived coalesced with others in one GRO read. */
    public long groCoalescedDatagrams() {
        return groCoalescedDatagrams;
    }
}
