package org.vrdma.vswitch.udp;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.vrdma.vswitch.udp.Mmsg.AF_INET;
import static org.vrdma.vswitch.udp.Mmsg.CAPTURE;
import static org.vrdma.vswitch.udp.Mmsg.CONTROL;
import static org.vrdma.vswitch.udp.Mmsg.CONTROL_LEN;
import static org.vrdma.vswitch.udp.Mmsg.EAGAIN;
import static org.vrdma.vswitch.udp.Mmsg.EINTR;
import static org.vrdma.vswitch.udp.Mmsg.ERRNO;
import static org.vrdma.vswitch.udp.Mmsg.FLAGS;
import static org.vrdma.vswitch.udp.Mmsg.INT_BE;
import static org.vrdma.vswitch.udp.Mmsg.IOV;
import static org.vrdma.vswitch.udp.Mmsg.IOVEC_BYTES;
import static org.vrdma.vswitch.udp.Mmsg.IOV_LEN;
import static org.vrdma.vswitch.udp.Mmsg.MMSG_BYTES;
import static org.vrdma.vswitch.udp.Mmsg.MSG_LEN;
import static org.vrdma.vswitch.udp.Mmsg.NAME;
import static org.vrdma.vswitch.udp.Mmsg.NAME_LEN;
import static org.vrdma.vswitch.udp.Mmsg.SHORT_BE;
import static org.vrdma.vswitch.udp.Mmsg.SOL_UDP;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.LoopClock;

/**
 * Reads the underlay socket with {@code recvmmsg} (FFM) into pooled receive buffers and hands each
 * datagram on as a slice, without a Netty {@code DatagramPacket}, socket address or packet list per
 * datagram: zero heap allocation per datagram once warm.
 *
 * <p>It reads through a duplicate of the channel's descriptor, registered with the channel's epoll
 * loop for {@code EPOLLIN} (edge-triggered); the channel itself does not read (auto-read off) and
 * still sends. One {@code recvmmsg} fills up to {@link #SLOTS} buffers; a call that returns fewer
 * than that found the socket empty, so a burst ends without the extra read that only returns
 * {@code EAGAIN}. Every burst reads until the socket is empty; a burst cut short by its bound queues
 * another on the loop, so nothing waits in the socket for the next arrival.
 *
 * <p>With GRO each slot holds the datagrams the kernel coalesced, with their size in a {@code
 * UDP_GRO} control message; they are cut into slices of that size. A slot's buffer is read into
 * again when every slice of it was released while the burst ran, and replaced otherwise.
 *
 * <p>{@link #poll()} is the same read, for a busy-polling loop that reads its sockets directly
 * instead of asking epoll first. Confined to the channel's event loop.
 */
final class DatagramReceiver implements EpollIoHandle {
    /** Buffers filled by one {@code recvmmsg}. */
    static final int SLOTS = 8;
    /** Calls of {@code recvmmsg} per burst before the rest is left to a queued task (fairness). */
    static final int MAX_CALLS_PER_BURST = 16;

    /** Failed reads in a row that end a burst. */
    static final int MAX_ERRORS_IN_A_ROW = 4;

    private static final int MSG_DONTWAIT = 0x40;
    private static final int MSG_TRUNC = 0x20;
    private static final int AF_INET6 = 10;
    private static final int UDP_GRO = 104;

    /** sockaddr_in6, the larger of the two families. */
    private static final int NAME_BYTES = 32;

    private static final int CONTROL_BYTES = 64;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle RECVMMSG;
    private static final MethodHandle DUP;
    private static final MethodHandle CLOSE;
    private static final Throwable UNAVAILABLE;

    static {
        MethodHandle recvmmsg = null;
        MethodHandle dup = null;
        MethodHandle close = null;
        Throwable unavailable = Mmsg.UNAVAILABLE;
        if (unavailable == null) {
            try {
                var lookup = LINKER.defaultLookup();
                // Critical: the call never blocks (MSG_DONTWAIT), and no safepoint may run between its
                // return and the read of its errno (Mmsg.errno()), which replaces capturing it. The
                // message array goes as a raw address: a segment argument of a shared arena costs two
                // atomic updates of its session per call (the arena is closed only after the last).
                recvmmsg = LINKER.downcallHandle(
                        lookup.find("recvmmsg").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG),
                        Linker.Option.critical(false));
                dup = LINKER.downcallHandle(
                        lookup.find("dup").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, JAVA_INT),
                        Linker.Option.captureCallState("errno"));
                close = LINKER.downcallHandle(
                        lookup.find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            } catch (Throwable t) {
                // No native access (e.g. --enable-native-access denied) or no such symbol: Netty reads.
                unavailable = t;
            }
        }
        RECVMMSG = recvmmsg;
        DUP = dup;
        CLOSE = close;
        UNAVAILABLE = unavailable;
    }

    /**
     * Whether this JVM may call {@code recvmmsg} directly; otherwise the channel reads. {@code
     * -Dvrdma.underlay.directReads=false} makes the channel read (to compare the two).
     */
    static boolean available() {
        return UNAVAILABLE == null && !"false".equals(System.getProperty("vrdma.underlay.directReads"));
    }

    private final NettyUnderlay underlay;
    private final ByteBufAllocator allocator;
    private final IoEventLoop loop;
    private final LoopClock clock;
    private final int slotBytes;
    private final FileDescriptor fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment msgs;
    private final long msgsAddress;
    private final MemorySegment iovs;
    private final MemorySegment names;
    private final MemorySegment controls;
    private final ByteBuf[] slots = new ByteBuf[SLOTS];
    private final Runnable readTask = this::onQueuedRead;
    private IoRegistration registration;
    private boolean closed;
    private boolean readQueued;

    private long calls;
    private long receiveErrors;
    private long truncated;
    private long queuedBursts;

    private DatagramReceiver(
            NettyUnderlay underlay, ByteBufAllocator allocator, IoEventLoop loop, int fd, int slotBytes) {
        this.underlay = underlay;
        this.allocator = allocator;
        this.loop = loop;
        this.clock = LoopClock.of(loop);
        this.slotBytes = slotBytes;
        this.fd = new FileDescriptor(fd);
        msgs = arena.allocate((long) SLOTS * MMSG_BYTES, 8);
        msgsAddress = msgs.address();
        iovs = arena.allocate((long) SLOTS * IOVEC_BYTES, 8);
        names = arena.allocate((long) SLOTS * NAME_BYTES, 8);
        controls = arena.allocate((long) SLOTS * CONTROL_BYTES, 8);
        for (int i = 0; i < SLOTS; i++) {
            long m = (long) i * MMSG_BYTES;
            msgs.set(ADDRESS, m + NAME, names.asSlice((long) i * NAME_BYTES));
            msgs.set(ADDRESS, m + IOV, iovs.asSlice((long) i * IOVEC_BYTES));
            msgs.set(JAVA_LONG, m + IOV_LEN, 1);
            msgs.set(ADDRESS, m + CONTROL, controls.asSlice((long) i * CONTROL_BYTES));
            iovs.set(JAVA_LONG, (long) i * IOVEC_BYTES + 8, slotBytes);
            newSlot(i);
        }
        resetLengths(SLOTS);
    }

    /**
     * Starts reading the socket {@code channelFd} on {@code loop} (the channel's own loop, whose
     * channel must not read itself). Call on the loop.
     *
     * @param slotBytes bytes per receive buffer: 64 KiB with GRO (a coalesced read), else the
     *     largest datagram
     */
    static DatagramReceiver start(
            NettyUnderlay underlay, ByteBufAllocator allocator, IoEventLoop loop, int channelFd, int slotBytes)
            throws IOException {
        int copy = dup(channelFd);
        DatagramReceiver r;
        try {
            r = new DatagramReceiver(underlay, allocator, loop, copy, slotBytes);
        } catch (RuntimeException e) {
            closeFd(copy);
            throw e;
        }
        try {
            r.registration = loop.register(r).get(10, TimeUnit.SECONDS);
            r.registration.submit(EpollIoOps.EPOLLIN.with(EpollIoOps.EPOLLET));
        } catch (Exception e) {
            r.close();
            throw new IOException("could not register the underlay socket for reading", e);
        }
        // Anything that arrived before the registration raised no edge.
        r.readBurst();
        return r;
    }

    private static int dup(int fd) throws IOException {
        MemorySegment state = Arena.ofAuto().allocate(CAPTURE);
        int copy;
        try {
            copy = (int) DUP.invokeExact(state, fd);
        } catch (Throwable t) {
            throw new IOException("dup failed", t);
        }
        if (copy < 0) {
            throw new IOException("dup(" + fd + ") failed: errno " + (int) ERRNO.get(state, 0L));
        }
        return copy;
    }

    private static void closeFd(int fd) {
        try {
            int rc = (int) CLOSE.invokeExact(fd);
            assert rc == 0 || rc == -1;
        } catch (Throwable ignored) {
            // Nothing more can be done about a descriptor that does not close.
        }
    }

    private void newSlot(int i) {
        ByteBuf b = allocator.directBuffer(slotBytes, slotBytes);
        slots[i] = b;
        long address = MemorySegment.ofBuffer(b.internalNioBuffer(0, slotBytes)).address();
        iovs.set(JAVA_LONG, (long) i * IOVEC_BYTES, address);
    }

    private void resetLengths(int used) {
        for (int i = 0; i < used; i++) {
            long m = (long) i * MMSG_BYTES;
            msgs.set(JAVA_INT, m + NAME_LEN, NAME_BYTES);
            msgs.set(JAVA_LONG, m + CONTROL_LEN, CONTROL_BYTES);
        }
    }

    @Override
    public FileDescriptor fd() {
        return fd;
    }

    @Override
    public void handle(IoRegistration registration, IoEvent event) {
        EpollIoEvent e = (EpollIoEvent) event;
        if (e.ops().contains(EpollIoOps.EPOLLIN) || e.ops().contains(EpollIoOps.EPOLLERR)) {
            readBurst();
        }
    }

    /**
     * Reads what the socket holds now (for a busy-polling loop) and returns the datagrams read; the
     * burst ends with the switch's flush as a wake-up's does.
     */
    int poll() {
        return closed ? 0 : readBurst();
    }

    private void onQueuedRead() {
        readQueued = false;
        if (!closed) {
            readBurst();
        }
    }

    /**
     * Reads until the socket is empty or the call bound is reached (then queues the rest); the
     * loop's clock is sampled, not read per packet, while the datagrams are handled.
     */
    private int readBurst() {
        clock.beginBurst();
        try {
            return readUntilEmpty();
        } finally {
            clock.endBurst();
        }
    }

    private int readUntilEmpty() {
        int datagrams = 0;
        int errorsInARow = 0;
        for (int call = 0; call < MAX_CALLS_PER_BURST; call++) {
            int n = recvmmsg();
            if (n < 0) {
                int err = -n;
                if (err == EAGAIN) {
                    return end(datagrams);
                }
                if (err != EINTR) {
                    // E.g. a queued ICMP error, reported once: counted, and the socket read on. One
                    // that persists (a closed descriptor) ends the burst instead of spinning on it.
                    receiveErrors++;
                    if (++errorsInARow == MAX_ERRORS_IN_A_ROW) {
                        return end(datagrams);
                    }
                }
                continue;
            }
            errorsInARow = 0;
            datagrams += deliver(n);
            if (n < SLOTS) {
                // recvmmsg stops at the first EAGAIN: the socket was empty.
                return end(datagrams);
            }
            // The burst goes on: what these datagrams made the switch send (the ACKs the peer's
            // window waits for) leaves now, not after the socket has been drained.
            underlay.onReadCallComplete();
        }
        if (!readQueued) {
            readQueued = true;
            queuedBursts++;
            loop.execute(readTask);
        }
        return end(datagrams);
    }

    private int end(int datagrams) {
        if (datagrams > 0) {
            underlay.onReadBurstComplete();
        }
        return datagrams;
    }

    /** Datagrams read into the slots, or {@code -errno}. */
    private int recvmmsg() {
        calls++;
        int n;
        try {
            n = (int) RECVMMSG.invokeExact(fd.intValue(), msgsAddress, SLOTS, MSG_DONTWAIT, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("recvmmsg", t);
        }
        return n < 0 ? -Mmsg.errno() : n;
    }

    private int deliver(int n) {
        int datagrams = 0;
        for (int i = 0; i < n; i++) {
            long m = (long) i * MMSG_BYTES;
            int bytes = msgs.get(JAVA_INT, m + MSG_LEN);
            int flags = msgs.get(JAVA_INT, m + FLAGS);
            ByteBuf slot = slots[i];
            if ((flags & MSG_TRUNC) != 0) {
                truncated++;
            } else {
                long source = source(i);
                int segment = groSegmentBytes(i);
                if (segment <= 0 || segment >= bytes) {
                    datagrams++;
                    underlay.onDatagram(slot.retainedSlice(0, bytes), source, false);
                } else {
                    for (int offset = 0; offset < bytes; offset += segment) {
                        datagrams++;
                        underlay.onDatagram(
                                slot.retainedSlice(offset, Math.min(segment, bytes - offset)), source, true);
                    }
                }
            }
            if (slot.refCnt() != 1) {
                // A slice is still held (queued by the switch or the vNIC): read into a new buffer.
                slot.release();
                newSlot(i);
            }
        }
        resetLengths(n);
        return datagrams;
    }

    private long source(int i) {
        long base = (long) i * NAME_BYTES;
        int length = msgs.get(JAVA_INT, (long) i * MMSG_BYTES + NAME_LEN);
        int family = names.get(JAVA_SHORT, base) & 0xFFFF;
        int port = names.get(SHORT_BE, base + 2) & 0xFFFF;
        if (family == AF_INET && length >= 8) {
            return UnderlayAddress.of(names.get(INT_BE, base + 4), port);
        }
        if (family == AF_INET6 && length >= 24) {
            // Only an IPv4-mapped address (::ffff:a.b.c.d) is an underlay address.
            if (names.get(JAVA_LONG, base + 8) == 0 && names.get(INT_BE, base + 16) == 0xFFFF) {
                return UnderlayAddress.of(names.get(INT_BE, base + 20), port);
            }
        }
        return UnderlayAddress.NONE;
    }

    /** The {@code UDP_GRO} segment size of slot {@code i}'s read, or 0 without one. */
    private int groSegmentBytes(int i) {
        long controlBytes = msgs.get(JAVA_LONG, (long) i * MMSG_BYTES + CONTROL_LEN);
        long base = (long) i * CONTROL_BYTES;
        long offset = 0;
        while (offset + 16 <= controlBytes && offset + 16 <= CONTROL_BYTES) {
            long length = controls.get(JAVA_LONG, base + offset);
            if (length < 16) {
                return 0;
            }
            int level = controls.get(JAVA_INT, base + offset + 8);
            int type = controls.get(JAVA_INT, base + offset + 12);
            if (level == SOL_UDP && type == UDP_GRO && length >= 20) {
                return controls.get(JAVA_INT, base + offset + 16);
            }
            offset += (length + 7) & ~7L;
        }
        return 0;
    }

    long calls() {
        return calls;
    }

    long receiveErrors() {
        return receiveErrors;
    }

    long truncated() {
        return truncated;
    }

    long queuedBursts() {
        return queuedBursts;
    }

    /** Stops reading: cancels the registration, closes the duplicate descriptor, frees the buffers. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (registration != null) {
            registration.cancel();
        }
        try {
            fd.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        for (int i = 0; i < SLOTS; i++) {
            if (slots[i] != null) {
                slots[i].release();
                slots[i] = null;
            }
        }
        arena.close();
    }
}
