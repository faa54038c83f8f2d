package org.vrdma.vswitch.udp;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.collection.LongObjectHashMap;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.vrdma.vnic.transport.DeferredPayloadAllocator;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.pipeline.UnderlayPort;
import org.vrdma.vswitch.pipeline.VSwitch;

/**
 * The real-time underlay: one Netty UDP channel carrying a {@link VSwitch}'s Geneve datagrams.
 *
 * <p><b>Send.</b> With GSO, consecutive datagrams of equal size to the same destination lie back to
 * back in a pooled send arena and leave as one {@code SegmentedDatagramPacket} (a slice of the
 * arena): the kernel cuts it into datagrams of the segment size (the last may be shorter) with a
 * single pass through the stack. Frames built with {@link #frameAllocator()} are placed in the
 * arena where their datagram continues the open batch, so the kernel's copy is the only copy on
 * the way out; other datagrams are copied into the arena once. Without GSO each datagram is
 * written as it is (no copy) and Netty batches them with {@code sendmmsg}. Either way one flush is
 * scheduled per burst, not per datagram.
 *
 * <p><b>In-place frames.</b> A frame's headroom holds the outer Ethernet/IPv4/UDP headers (42
 * bytes) that a UDP socket does not send, so a frame whose datagram continues the previous one
 * starts 42 bytes before the previous datagram's end: while the frame travels through the switch
 * its outer headers cover that datagram's tail, which is saved when the region is handed out and
 * put back when the frame is sent. If the frame is not sent straight away (dropped, queued by QoS
 * or an emulated link, delivered locally), the reservation is abandoned at the next send, region
 * or flush: the previous datagram then leaves from a copy with its saved tail, the frame keeps its
 * headers, and the arena moves past it.
 *
 * <p><b>Receive.</b> On epoll the socket is read by a {@link DatagramReceiver}: {@code recvmmsg}
 * through FFM into pooled buffers, several datagrams (or GRO reads) per call, each datagram handed
 * on as a slice with its sender packed in a {@code long}: nothing is allocated per datagram. With
 * GRO the kernel hands several datagrams of one flow back in one buffer with their size in a
 * control message, and they are cut into slices there. A busy-polling loop calls {@link
 * #pollSocket()} to read without asking epoll first. On NIO (or without native access) the channel
 * reads and {@link #channelRead} takes Netty's {@code DatagramPacket}s.
 *
 * <p>Confined to the channel's event loop; the switch owns what it is given.
 */
public final class NettyUnderlay extends ChannelInboundHandlerAdapter implements UnderlayPort {
    /** Largest GSO send: below the 65507-byte UDP payload limit. */
    static final int MAX_BATCH_BYTES = 65_000;
    /** The kernel's UDP_MAX_SEGMENTS on older kernels. */
    static final int MAX_SEGMENTS = 64;
    /** Send arena: batches and in-place frames are laid out here until it is full. */
    static final int ARENA_BYTES = 512 * 1024;
    /** Full arenas kept for reuse (see {@link #newArena}). */
    static final int SPARE_ARENAS = 4;
    /**
     * A batch's segment size is its first datagram's size plus this, and datagrams up to twice this
     * shorter than the segment size are padded to it: a WRITE's first packet carries a 16-byte RETH
     * and the rest do not, so without padding every message would split its GSO batch in two.
     */
    static final int PAD_BYTES = 16;
    /**
     * Largest datagram that a batch's single shorter datagram is padded for, so the two leave
     * together (see {@link #canWiden}).
     */
    static final int WIDEN_MAX_BYTES = 1024;

    private static final int OUTER = UnderlayPort.OUTER_HEADERS_BYTES;
    private static final boolean INET4_HASH_IS_ADDRESS = inet4HashIsAddress();

    private final boolean gso;
    private final boolean gro;
    private final LongObjectHashMap<InetSocketAddress> addresses = new LongObjectHashMap<>();
    private final Runnable flushTask = this::flushTask;
    private final FrameAllocator frameAllocator = new FrameAllocator();
    private DatagramChannel channel;
    private ByteBufAllocator allocator;
    private VSwitch vswitch;
    private boolean flushScheduled;
    /** Reads the socket when the channel does not (epoll with FFM); null when the channel reads. */
    private DatagramReceiver receiver;
    /** Sends GSO batches with sendmmsg (epoll with FFM and GSO); null when the channel sends. */
    private DatagramSender sender;

    // Send arena: [0, cursor) is taken (batches written or open, frames handed out).
    private ByteBuf arena;
    private long arenaAddress;
    // Full arenas kept for reuse, oldest first; one is reused when this underlay holds its only reference.
    private final ByteBuf[] spareArenas = new ByteBuf[SPARE_ARENAS];
    private int spareArenaCount;
    private long arenasAllocated;
    private int cursor;

    // The open GSO batch: [batchStart, batchEnd) of the arena, its last datagram from lastStart.
    private boolean batchOpen;
    private int batchStart;
    private int batchEnd;
    private int lastStart;
    private int lastBytes;
    private long batchDestination;
    private int segmentBytes;
    private int segments;
    private boolean batchClosed;

    // The region last handed out by the frame allocator; its datagram would span [resStart, resEnd).
    private boolean reserved;
    private int resStart;
    private int resEnd;
    private boolean resOverlaps;
    private boolean lastReservationAbandoned;
    private final byte[] savedTail = new byte[OUTER];
    private final byte[] widenScratch = new byte[WIDEN_MAX_BYTES];
    // The reservation's payload when its vNIC left it in memory (deferPayload): arena offset, length,
    // native address to gather it from. resHoleBytes == 0: none.
    private int resHoleStart;
    private int resHoleBytes;
    private long resHoleAddress;
    // Per segment of the open batch, the same: sent from memory by the segment's iovecs.
    private final int[] holeStart = new int[MAX_SEGMENTS];
    private final int[] holeBytes = new int[MAX_SEGMENTS];
    private final long[] holeAddress = new long[MAX_SEGMENTS];
    /** {@link #PAD_BYTES}, or 0 once a send failed: a path whose MTU has no room for the padding. */
    private int padBytes = PAD_BYTES;

    private long datagramsSent;
    private long gsoSends;
    private long gsoSegments;
    private long inPlaceDatagrams;
    private long abandonedReservations;
    private long deferredPayloads;
    private long widenedDatagrams;
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

    void receiver(DatagramReceiver r) {
        this.receiver = r;
    }

    void sender(DatagramSender s) {
        this.sender = s;
    }

    /** Whether GSO batches leave through this underlay's own {@code sendmmsg} rather than the channel. */
    public boolean directSends() {
        return sender != null;
    }

    /** {@code sendmmsg} calls made by the direct sender (0 when the channel sends). */
    public long sendCalls() {
        return sender == null ? 0 : sender.calls();
    }

    /** Messages (GSO sends or datagrams) the direct sender could not send: socket full or refused. */
    public long sendsDropped() {
        return sender == null ? 0 : sender.messagesDropped();
    }

    /** A message the kernel refused ({@code errno}): counted as the channel's failed writes are. */
    void onSendError(int errno) {
        sendErrors++;
        // A GSO segment size above the path MTU fails the send (EMSGSIZE or EINVAL): without padding
        // the segments are no larger than the datagrams themselves. What was lost is resent by RC.
        padBytes = 0;
        lastSendError = "sendmmsg: " + errnoName(errno);
    }

    private static String errnoName(int errno) {
        return switch (errno) {
            case 90 -> "Message too long (EMSGSIZE)";
            case 22 -> "Invalid argument (EINVAL)";
            case 101 -> "Network is unreachable (ENETUNREACH)";
            case 111 -> "Connection refused (ECONNREFUSED)";
            case 105 -> "No buffer space available (ENOBUFS)";
            default -> "errno " + errno;
        };
    }

    /** Whether the socket is read with {@code recvmmsg} by this underlay rather than by the channel. */
    public boolean directReads() {
        return receiver != null;
    }

    /**
     * Reads what the socket holds now, for a busy-polling loop; returns the datagrams read (0 when
     * the channel reads the socket itself).
     */
    public int pollSocket() {
        return receiver == null ? 0 : receiver.poll();
    }

    /** {@code recvmmsg} calls made (0 when the channel reads). */
    public long receiveCalls() {
        return receiver == null ? 0 : receiver.calls();
    }

    /** Failed reads and truncated datagrams (0 when the channel reads). */
    public long receiveErrors() {
        return receiver == null ? 0 : receiver.receiveErrors() + receiver.truncated();
    }

    public boolean gso() {
        return gso;
    }

    public boolean gro() {
        return gro;
    }

    /**
     * Allocator for frames a vNIC sends through this host's switch (see {@code
     * Device.Builder.frameAllocator}): on the loop, with GSO, a direct buffer of exactly the asked
     * capacity in the send arena, so an encapsulated frame leaves without a copy; otherwise, and
     * for heap buffers, the channel's pooled allocator. Buffers from the arena cannot grow.
     */
    public ByteBufAllocator frameAllocator() {
        return frameAllocator;
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
        if (reserved && isReservation(datagram, bytes)) {
            reserved = false;
            if (resOverlaps) {
                arena.setBytes(resStart - OUTER, savedTail, 0, OUTER);
            }
            int start = resStart;
            if (batchOpen && batchEnd == start && canWiden(destination, bytes, start)) {
                start = widenMoving(start, bytes);
            }
            if (batchOpen && !(batchEnd == start && fits(destination, bytes))) {
                writeBatch();
            }
            if (!batchOpen) {
                openBatch(start, destination, bytes);
            }
            // A datagram moved forward by widenMoving took its unwritten payload bytes along.
            holeStart[segments] = resHoleStart + start - resStart;
            holeBytes[segments] = resHoleBytes;
            holeAddress[segments] = resHoleAddress;
            if (resHoleBytes > 0) {
                deferredPayloads++;
                resHoleBytes = 0;
            }
            append(start, bytes);
            cursor = batchEnd;
            lastReservationAbandoned = false;
            inPlaceDatagrams++;
            datagram.release();
            scheduleFlush();
            return;
        }
        if (reserved) {
            abandonReservation();
        }
        if (batchOpen && batchEnd == cursor && canWiden(destination, bytes, cursor)) {
            widen(segmentFor(bytes));
            cursor = batchEnd;
        }
        if (batchOpen
                && !(batchEnd == cursor
                        && fits(destination, bytes)
                        && cursor + bytes + 2 * PAD_BYTES <= arena.capacity())) {
            writeBatch();
        }
        if (!batchOpen) {
            if (arena == null || cursor + bytes + 2 * PAD_BYTES > arena.capacity()) {
                newArena();
            }
            openBatch(cursor, destination, bytes);
        }
        arena.setBytes(cursor, datagram, datagram.readerIndex(), bytes);
        holeBytes[segments] = 0;
        append(cursor, bytes);
        cursor = batchEnd;
        datagram.release();
        scheduleFlush();
    }

    /**
     * Whether a batch holding one shorter datagram (typically an ACK) can take a larger one (the
     * request that follows it: a response SEND, the next request) by padding the first to the
     * larger one's segment size: both then leave in one GSO send and arrive as one GRO read, where
     * two datagrams cost a second pass through the stack and the receiver is woken by the first
     * (on a single core the sender is even preempted between the two messages of one {@code
     * sendmmsg}). Only small datagrams, so the padding stays small. {@code start} is where the new
     * datagram lies now ({@link #batchEnd}).
     */
    private boolean canWiden(long destination, int bytes, int start) {
        if (segments != 1
                || batchClosed
                || destination != batchDestination
                || bytes <= segmentBytes
                || bytes > WIDEN_MAX_BYTES) {
            return false;
        }
        int newStart = lastStart + segmentFor(bytes);
        return newStart + bytes + 2 * PAD_BYTES <= arena.capacity() && newStart >= start;
    }

    private int segmentFor(int bytes) {
        return Math.min(bytes + padBytes, MAX_BATCH_BYTES);
    }

    /** Pads the batch's one datagram to {@code newSegmentBytes}: the batch now ends there. */
    private void widen(int newSegmentBytes) {
        arena.setZero(lastStart + lastBytes, newSegmentBytes - lastBytes);
        segmentBytes = newSegmentBytes;
        batchEnd = lastStart + newSegmentBytes;
        widenedDatagrams++;
    }

    /**
     * {@link #widen} for a datagram built in place at {@code start}, right behind the batch: it moves
     * forward to the batch's new end first (through a scratch array: the two ranges overlap).
     * Returns its new start.
     */
    private int widenMoving(int start, int bytes) {
        int newSegmentBytes = segmentFor(bytes);
        int newStart = lastStart + newSegmentBytes;
        if (newStart != start) {
            arena.getBytes(start, widenScratch, 0, bytes);
            arena.setBytes(newStart, widenScratch, 0, bytes);
        }
        widen(newSegmentBytes);
        return newStart;
    }

    private boolean isReservation(ByteBuf datagram, int bytes) {
        return bytes == resEnd - resStart
                && datagram.hasMemoryAddress()
                && datagram.memoryAddress() + datagram.readerIndex() == arenaAddress + resStart;
    }

    private boolean fits(long destination, int bytes) {
        return destination == batchDestination
                && bytes <= segmentBytes
                && !batchClosed
                && segments < MAX_SEGMENTS
                && batchEnd - batchStart + segmentBytes <= MAX_BATCH_BYTES;
    }

    private void openBatch(int start, long destination, int bytes) {
        batchOpen = true;
        batchStart = start;
        batchEnd = start;
        batchDestination = destination;
        segmentBytes = Math.min(bytes + padBytes, MAX_BATCH_BYTES);
        segments = 0;
        batchClosed = false;
    }

    /**
     * Appends the datagram at {@code start} (= {@link #batchEnd}). One at most {@code 2 *
     * PAD_BYTES} shorter than the segment size is padded with zeros to it (the receiving switch
     * trims RoCE frames to their IPv4 length); a shorter one can only be the last segment. The
     * caller made sure the arena holds the padding.
     */
    private void append(int start, int bytes) {
        lastStart = start;
        lastBytes = bytes;
        segments++;
        int fill = segmentBytes - bytes;
        if (fill <= 2 * padBytes) {
            arena.setZero(start + bytes, fill);
            batchEnd = start + segmentBytes;
        } else {
            batchEnd = start + bytes;
            batchClosed = true;
        }
    }

    /** A region in the arena for a frame of {@code capacityBytes}, or null when none can be had. */
    private ByteBuf reserve(int capacityBytes) {
        if (!gso
                || channel == null
                || !channel.isActive()
                || !channel.eventLoop().inEventLoop()
                || capacityBytes <= OUTER
                || capacityBytes - OUTER > MAX_BATCH_BYTES
                || (arena != null && arenaAddress == 0)) {
            return null;
        }
        if (reserved) {
            abandonReservation();
        }
        // The frame's outer headers may cover the open batch's last datagram only while frames
        // leave as they are built; after an abandoned region, start clear of the batch.
        boolean overlap = batchOpen && batchEnd == cursor && batchEnd - lastStart >= OUTER && !lastReservationAbandoned;
        int start = overlap ? cursor - OUTER : cursor;
        if (arena == null || start + capacityBytes + 2 * PAD_BYTES > arena.capacity()) {
            if (batchOpen) {
                writeBatch();
            }
            newArena();
            if (!arena.hasMemoryAddress()) {
                return null;
            }
            overlap = false;
            start = 0;
        }
        if (overlap) {
            arena.getBytes(start, savedTail, 0, OUTER);
        }
        reserved = true;
        resHoleBytes = 0;
        resOverlaps = overlap;
        resStart = start + OUTER;
        resEnd = start + capacityBytes;
        return arena.retainedSlice(start, capacityBytes).clear();
    }

    /**
     * The reserved frame did not come back in turn: it was dropped or is held. Its headers stay as
     * the switch wrote them; the datagram they cover leaves from a copy with its saved tail.
     */
    private void abandonReservation() {
        reserved = false;
        abandonedReservations++;
        materializeReservation();
        if (resOverlaps) {
            // The last datagram with its padding is [lastStart, batchEnd); the saved tail is its end.
            int paddedBytes = batchEnd - lastStart;
            ByteBuf copy = allocator.directBuffer(paddedBytes);
            copy.writeBytes(arena, lastStart, paddedBytes - OUTER).writeBytes(savedTail, 0, OUTER);
            int last = segments - 1;
            if (holeBytes[last] > 0) {
                // Its payload is still in memory: the copy takes it from there.
                DatagramSender.copyMemory(
                        holeAddress[last], copy.memoryAddress() + holeStart[last] - lastStart, holeBytes[last]);
            }
            copy.writerIndex(lastBytes);
            long destination = batchDestination;
            segments--;
            batchEnd = lastStart;
            // The datagrams before it were padded to the segment size; the new last one leaves so.
            lastStart = batchEnd - segmentBytes;
            lastBytes = segmentBytes;
            if (segments > 0) {
                writeBatch();
            } else {
                batchOpen = false;
            }
            if (sender != null && copy.hasMemoryAddress()) {
                if (!sender.hasRoom(1)) {
                    sender.flush();
                }
                sender.begin(destination, 0);
                sender.gather(copy.memoryAddress() + copy.readerIndex(), copy.readableBytes());
                sender.end();
                sender.hold(copy);
            } else if (channel.isWritable()) {
                channel.write(new DatagramPacket(copy, address(destination)), channel.voidPromise());
            } else {
                sendsDroppedNotWritable++;
                copy.release();
            }
        } else if (batchOpen) {
            writeBatch();
        }
        cursor = Math.max(cursor, resEnd);
        lastReservationAbandoned = true;
    }

    /** Copies the reserved frame's payload in from memory: the frame is read or held by others now. */
    private void materializeReservation() {
        if (resHoleBytes > 0) {
            DatagramSender.copyMemory(resHoleAddress, arenaAddress + resHoleStart, resHoleBytes);
            resHoleBytes = 0;
        }
    }

    @Override
    public void completeFrame(ByteBuf frame) {
        materializeReservation();
    }

    /** {@link DeferredPayloadAllocator#deferPayload} for the frame last handed out. */
    private boolean deferPayload(ByteBuf frame, int index, int lengthBytes, long address) {
        if (!reserved
                || resHoleBytes != 0
                || sender == null
                || address == 0
                || !frame.hasMemoryAddress()
                || frame.memoryAddress() != arenaAddress + resStart - OUTER
                || !vswitch.sendsFramesAsBuilt()) {
            return false;
        }
        int start = resStart - OUTER + index;
        if (start < resStart || start + lengthBytes > resEnd) {
            return false;
        }
        resHoleStart = start;
        resHoleBytes = lengthBytes;
        resHoleAddress = address;
        return true;
    }

    private void newArena() {
        ByteBuf next = null;
        // A full arena is kept for reuse once nothing else holds it (its sends returned, its frames
        // released): handing 512 KiB back to the pool made the allocator free and re-create (and
        // zero) whole pool chunks as its usage swung, a few per cent of the sending loop in perf.
        for (int i = 0; i < spareArenaCount; i++) {
            if (spareArenas[i].refCnt() == 1) {
                next = spareArenas[i];
                spareArenas[i] = spareArenas[--spareArenaCount];
                spareArenas[spareArenaCount] = null;
                break;
            }
        }
        if (arena != null) {
            if (spareArenaCount == spareArenas.length) {
                // All still held (frames queued by QoS or an emulated link): let the oldest go.
                spareArenas[0].release();
                System.arraycopy(spareArenas, 1, spareArenas, 0, spareArenaCount - 1);
                spareArenaCount--;
            }
            spareArenas[spareArenaCount++] = arena;
        }
        if (next == null) {
            next = allocator.directBuffer(ARENA_BYTES, ARENA_BYTES);
            arenasAllocated++;
        }
        arena = next;
        arenaAddress = arena.hasMemoryAddress() ? arena.memoryAddress() : 0;
        cursor = 0;
        lastReservationAbandoned = false;
    }

    private void writeBatch() {
        batchOpen = false;
        lastReservationAbandoned = false;
        if (sender != null && arenaAddress != 0) {
            queueBatch();
            return;
        }
        if (!channel.isWritable()) {
            sendsDroppedNotWritable += segments;
            return;
        }
        // The last segment leaves without its padding.
        ByteBuf b = arena.retainedSlice(batchStart, lastStart + lastBytes - batchStart);
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

    /** The closed batch as one message of the direct sender: the arena is held until it left. */
    private void queueBatch() {
        if (!sender.hasRoom(2 * segments + 1)) {
            sender.flush();
        }
        if (segments > 1) {
            gsoSends++;
            gsoSegments += segments;
        }
        sender.begin(batchDestination, segments > 1 ? segmentBytes : 0);
        // Headers from the arena, payloads left in memory from there; the last segment leaves
        // without its padding.
        int from = batchStart;
        for (int i = 0; i < segments; i++) {
            if (holeBytes[i] > 0) {
                sender.gather(arenaAddress + from, holeStart[i] - from);
                sender.gather(holeAddress[i], holeBytes[i]);
                from = holeStart[i] + holeBytes[i];
            }
        }
        sender.gather(arenaAddress + from, lastStart + lastBytes - from);
        sender.end();
        sender.hold(arena.retain());
    }

    private void scheduleFlush() {
        if (!flushScheduled) {
            flushScheduled = true;
            channel.eventLoop().execute(flushTask);
        }
    }

    private void flushTask() {
        if (!flushScheduled) {
            return; // flushed since it was queued (inside a read burst); a later send queued another
        }
        // Flushed here, never deferred by re-queuing this task: a re-queued flush was seen not to
        // run (a 1 MiB READ's 256 responses stayed in the channel's outbound buffer while the loop
        // slept in epoll_wait), and every later send only wrote behind the stuck flag.
        flushNow();
    }

    private void flushNow() {
        flushes++;
        flushScheduled = false;
        if (reserved) {
            abandonReservation();
        }
        if (batchOpen) {
            writeBatch();
        }
        if (sender != null) {
            sender.flush();
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
        // A slice of a larger read: the kernel coalesced this datagram with others.
        onDatagram(content, fromSocketAddress(packet.sender()), gro && content.unwrap() != null);
    }

    /** One received datagram, from the channel or from {@link DatagramReceiver}; the switch takes it. */
    void onDatagram(ByteBuf datagram, long source, boolean coalesced) {
        datagramsReceived++;
        if (coalesced) {
            groCoalescedDatagrams++;
        }
        vswitch.onUnderlayDatagram(datagram, source);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        onReadBurstComplete();
    }

    /**
     * A full {@code recvmmsg} inside a read burst that goes on: what the datagrams made the switch
     * send is flushed now. Flushed only at the end of the burst, a receiver's ACKs waited until it
     * had drained the socket, which held the sender's whole window (it sends what the window allows
     * in one flush, and the ACKs opened the whole window at once): the two loops took turns moving
     * one window each way instead of working at the same time.
     */
    void onReadCallComplete() {
        if (batchOpen || reserved || (sender != null && sender.queuedMessages() > 0)) {
            flushNow();
        }
    }

    /** The end of a read burst that delivered at least one datagram. */
    void onReadBurstComplete() {
        readBursts++;
        // What the switch sent while reading is flushed by the scheduled flush task, after the
        // tasks this read queued (completion handlers) have had their turn to send as well.
        if (!flushScheduled && batchOpen) {
            flushNow();
        }
    }

    /** A failed write (its promise is the void one) or read: counted, never silent. */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        sendErrors++;
        // A GSO segment size above the path MTU fails the send (EMSGSIZE or EINVAL): without padding the
        // segments are no larger than the datagrams themselves. What was lost is resent by RC.
        padBytes = 0;
        lastSendError = String.valueOf(cause.getMessage() == null ? cause : cause.getMessage());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (receiver != null) {
            receiver.close();
            receiver = null;
        }
        reserved = false;
        batchOpen = false;
        if (sender != null) {
            sender.close();
            sender = null;
        }
        if (arena != null) {
            arena.release();
            arena = null;
        }
        for (int i = 0; i < spareArenaCount; i++) {
            spareArenas[i].release();
            spareArenas[i] = null;
        }
        spareArenaCount = 0;
        super.channelInactive(ctx);
    }

    public long datagramsSent() {
        return datagramsSent;
    }

    /** Send arenas taken from the allocator (the rest were reused). */
    public long arenasAllocated() {
        return arenasAllocated;
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

    /** Datagrams sent from the frame they were built in, without a copy into the arena. */
    public long inPlaceDatagrams() {
        return inPlaceDatagrams;
    }

    /** Datagrams whose payload the kernel gathered straight from the memory region (no copy into the frame). */
    public long deferredPayloads() {
        return deferredPayloads;
    }

    /**
     * The data-path counters the benchmarks read, in this order: datagrams sent, GSO sends, flushes,
     * datagrams received, read bursts, {@code recvmmsg} calls, datagrams sent with their payload from
     * memory, {@code sendmmsg} calls. Read on the underlay's loop.
     */
    public long[] dataPathCounters() {
        return new long[] {
            datagramsSent(),
            gsoSends(),
            flushes(),
            datagramsReceived(),
            readBursts(),
            receiveCalls(),
            deferredPayloads(),
            sendCalls()
        };
    }

    /** Frames handed out in the arena that were not sent in turn (dropped, queued, delivered locally). */
    public long abandonedReservations() {
        return abandonedReservations;
    }

    /**
     * Datagrams padded to a larger segment size so that the larger datagram after them joined
     * their GSO send (an ACK and the response that follows it leave together).
     */
    public long widenedDatagrams() {
        return widenedDatagrams;
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

    /** {@link #frameAllocator()}: direct frames in the send arena, everything else pooled. */
    private final class FrameAllocator extends AbstractByteBufAllocator implements DeferredPayloadAllocator {
        FrameAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return pooled().heapBuffer(initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf frame = reserve(initialCapacity);
            return frame != null ? frame : pooled().directBuffer(initialCapacity, maxCapacity);
        }

        @Override
        public boolean deferPayload(ByteBuf frame, int index, int lengthBytes, long address) {
            return NettyUnderlay.this.deferPayload(frame, index, lengthBytes, address);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return true;
        }

        private ByteBufAllocator pooled() {
            return allocator != null ? allocator : PooledByteBufAllocator.DEFAULT;
        }
    }
}
