package org.vrdma.vswitch.udp;

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
import static org.vrdma.vswitch.udp.Mmsg.INT_BE;
import static org.vrdma.vswitch.udp.Mmsg.IOV;
import static org.vrdma.vswitch.udp.Mmsg.IOVEC_BYTES;
import static org.vrdma.vswitch.udp.Mmsg.IOV_LEN;
import static org.vrdma.vswitch.udp.Mmsg.MMSG_BYTES;
import static org.vrdma.vswitch.udp.Mmsg.NAME;
import static org.vrdma.vswitch.udp.Mmsg.NAME_LEN;
import static org.vrdma.vswitch.udp.Mmsg.SHORT_BE;
import static org.vrdma.vswitch.udp.Mmsg.SOL_UDP;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.vrdma.vswitch.pipeline.UnderlayAddress;

/**
 * Sends the underlay's datagrams with {@code sendmmsg} (FFM): each message is a GSO send (a {@code
 * UDP_SEGMENT} control message with the segment size) or a single datagram, gathered from any
 * number of native memory ranges (an iovec each), so a segment's headers and its payload need not
 * lie together. Messages are queued in native arrays built once (no object per send, unlike Netty's
 * {@code SegmentedDatagramPacket} and outbound-buffer entry) and leave in one call per flush; the
 * buffers they point into are held until then.
 *
 * <p>Confined to the channel's event loop. It writes on the channel's own descriptor, which is
 * non-blocking: a full socket ({@code EAGAIN}) drops what is left of the flush (counted; RC
 * retransmits it).
 */
final class DatagramSender implements AutoCloseable {
    /** Messages queued per {@code sendmmsg}: the kernel's UIO_MAXIOV bounds the call as well. */
    static final int MAX_MESSAGES = 64;
    /** Iovecs over all queued messages; one message holds at most UIO_MAXIOV (1024). */
    static final int MAX_IOVECS = 1024;

    private static final int UDP_SEGMENT = 103;

    private static final int SOCKADDR_IN_BYTES = 16;
    /** CMSG_SPACE(sizeof(uint16_t)): header (16) + data, aligned to 8. */
    private static final int CONTROL_BYTES = 24;
    /** CMSG_LEN(sizeof(uint16_t)). */
    private static final int SEGMENT_CMSG_LEN = 18;

    /** {@code sendmmsg} as sends call it: without capturing {@code errno} (no object per call). */
    private static final MethodHandle SENDMMSG;
    /** {@code sendmmsg} capturing {@code errno}: a call the first one refused is made again with it. */
    private static final MethodHandle SENDMMSG_ERRNO;

    private static final Throwable UNAVAILABLE;

    static {
        MethodHandle sendmmsg = null;
        MethodHandle sendmmsgErrno = null;
        Throwable unavailable = Mmsg.UNAVAILABLE;
        if (unavailable == null) {
            try {
                // The message array is passed as its address (a long): no segment object per call.
                // Not critical: a call of many GSO messages runs the loopback receive path as well.
                Linker linker = Linker.nativeLinker();
                MemorySegment symbol = linker.defaultLookup().find("sendmmsg").orElseThrow();
                FunctionDescriptor signature = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT);
                sendmmsg = linker.downcallHandle(symbol, signature);
                sendmmsgErrno = linker.downcallHandle(symbol, signature, Linker.Option.captureCallState("errno"));
            } catch (Throwable t) {
                unavailable = t;
            }
        }
        SENDMMSG = sendmmsg;
        SENDMMSG_ERRNO = sendmmsgErrno;
        UNAVAILABLE = unavailable;
    }

    /** Copies {@code lengthBytes} between two native addresses (live direct memory). */
    static void copyMemory(long fromAddress, long toAddress, int lengthBytes) {
        MemorySegment.copy(Mmsg.EVERYWHERE, fromAddress, Mmsg.EVERYWHERE, toAddress, lengthBytes);
    }

    /**
     * Whether this JVM may call {@code sendmmsg} directly; otherwise Netty's channel sends. {@code
     * -Dvrdma.underlay.directSends=false} makes the channel send (to compare the two).
     */
    static boolean available() {
        return UNAVAILABLE == null && !"false".equals(System.getProperty("vrdma.underlay.directSends"));
    }

    /** What a failed message tells the underlay. */
    interface Errors {
        /** A message the kernel refused ({@code errno} other than EAGAIN): it is skipped. */
        void onSendError(int errno);
    }

    private final int fd;
    private final Errors errors;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment msgs;
    private final MemorySegment iovs;
    private final MemorySegment names;
    private final MemorySegment controls;
    private final MemorySegment errno;
    private final long msgsAddress;
    private final long iovsAddress;
    private final long namesAddress;
    private final long controlsAddress;
    /** Buffers the queued iovecs point into, released after the flush. */
    private ByteBuf[] held = new ByteBuf[MAX_MESSAGES * 2];

    private int heldCount;
    private int messages;
    private int iovecs;
    private int messageFirstIovec;
    private long lastIovecEnd;
    private boolean closed;

    private long calls;
    private long messagesSent;
    private long messagesDropped;

    DatagramSender(int fd, Errors errors) {
        this.fd = fd;
        this.errors = errors;
        msgs = arena.allocate((long) MAX_MESSAGES * MMSG_BYTES, 8);
        iovs = arena.allocate((long) MAX_IOVECS * IOVEC_BYTES, 8);
        names = arena.allocate((long) MAX_MESSAGES * SOCKADDR_IN_BYTES, 8);
        controls = arena.allocate((long) MAX_MESSAGES * CONTROL_BYTES, 8);
        errno = arena.allocate(CAPTURE);
        msgsAddress = msgs.address();
        iovsAddress = iovs.address();
        namesAddress = names.address();
        controlsAddress = controls.address();
        for (int i = 0; i < MAX_MESSAGES; i++) {
            long m = (long) i * MMSG_BYTES;
            msgs.set(JAVA_LONG, m + NAME, namesAddress + (long) i * SOCKADDR_IN_BYTES);
            msgs.set(JAVA_INT, m + NAME_LEN, SOCKADDR_IN_BYTES);
            long c = (long) i * CONTROL_BYTES;
            controls.set(JAVA_LONG, c, SEGMENT_CMSG_LEN);
            controls.set(JAVA_INT, c + 8, SOL_UDP);
            controls.set(JAVA_INT, c + 12, UDP_SEGMENT);
        }
    }

    /** Whether one more message of up to {@code iovecsNeeded} iovecs fits before a flush. */
    boolean hasRoom(int iovecsNeeded) {
        return messages < MAX_MESSAGES && iovecs + iovecsNeeded <= MAX_IOVECS;
    }

    /**
     * Starts a message to {@code destination}; {@code segmentBytes} &gt; 0 makes it a GSO send cut
     * into datagrams of that size (the last may be shorter). The caller made sure it fits ({@link
     * #hasRoom}).
     */
    void begin(long destination, int segmentBytes) {
        long m = (long) messages * MMSG_BYTES;
        long n = (long) messages * SOCKADDR_IN_BYTES;
        names.set(JAVA_SHORT, n, (short) AF_INET);
        names.set(SHORT_BE, n + 2, (short) UnderlayAddress.port(destination));
        names.set(INT_BE, n + 4, UnderlayAddress.ipv4(destination));
        msgs.set(JAVA_LONG, m + IOV, iovsAddress + (long) iovecs * IOVEC_BYTES);
        if (segmentBytes > 0) {
            long c = (long) messages * CONTROL_BYTES;
            controls.set(JAVA_SHORT, c + 16, (short) segmentBytes);
            msgs.set(JAVA_LONG, m + CONTROL, controlsAddress + c);
            msgs.set(JAVA_LONG, m + CONTROL_LEN, CONTROL_BYTES);
        } else {
            msgs.set(JAVA_LONG, m + CONTROL, 0L);
            msgs.set(JAVA_LONG, m + CONTROL_LEN, 0L);
        }
        messageFirstIovec = iovecs;
        lastIovecEnd = 0;
    }

    /** Appends {@code lengthBytes} at native {@code address} to the message (merged with the last range when contiguous). */
    void gather(long address, int lengthBytes) {
        if (lengthBytes <= 0) {
            return;
        }
        if (iovecs > messageFirstIovec && address == lastIovecEnd) {
            long len = (long) (iovecs - 1) * IOVEC_BYTES + 8;
            iovs.set(JAVA_LONG, len, iovs.get(JAVA_LONG, len) + lengthBytes);
        } else {
            long v = (long) iovecs * IOVEC_BYTES;
            iovs.set(JAVA_LONG, v, address);
            iovs.set(JAVA_LONG, v + 8, lengthBytes);
            iovecs++;
        }
        lastIovecEnd = address + lengthBytes;
    }

    /** Ends the message begun last. */
    void end() {
        msgs.set(JAVA_LONG, (long) messages * MMSG_BYTES + IOV_LEN, iovecs - messageFirstIovec);
        messages++;
    }

    /** Keeps {@code buf} (the caller's reference) until the queued messages have left. */
    void hold(ByteBuf buf) {
        if (heldCount == held.length) {
            held = java.util.Arrays.copyOf(held, held.length * 2);
        }
        held[heldCount++] = buf;
    }

    int queuedMessages() {
        return messages;
    }

    /** Sends every queued message ({@code sendmmsg} until all left or the socket is full), then releases the held buffers. */
    void flush() {
        int start = 0;
        while (start < messages && !closed) {
            calls++;
            long first = msgsAddress + (long) start * MMSG_BYTES;
            int n;
            try {
                n = (int) SENDMMSG.invokeExact(fd, first, messages - start, 0);
                if (n < 0) {
                    // Nothing was sent (the first message failed): the same call again, with its
                    // errno, is refused or succeeds alike. The JVM may have reused errno since.
                    calls++;
                    n = (int) SENDMMSG_ERRNO.invokeExact(errno, fd, first, messages - start, 0);
                }
            } catch (Throwable t) {
                throw new IllegalStateException("sendmmsg", t);
            }
            if (n > 0) {
                messagesSent += n;
                start += n;
                continue;
            }
            int err = (int) ERRNO.get(errno, 0L);
            if (err == EINTR) {
                continue;
            }
            if (err == EAGAIN) {
                break;
            }
            // The first message was refused (e.g. EMSGSIZE or EINVAL for a segment above the path
            // MTU): skip it, send the rest.
            messagesDropped++;
            errors.onSendError(err);
            start++;
        }
        messagesDropped += messages - start;
        messages = 0;
        iovecs = 0;
        for (int i = 0; i < heldCount; i++) {
            held[i].release();
            held[i] = null;
        }
        heldCount = 0;
    }

    long calls() {
        return calls;
    }

    long messagesSent() {
        return messagesSent;
    }

    /** Messages not sent: the socket was full, or the kernel refused them. */
    long messagesDropped() {
        return messagesDropped;
    }

    /** Drops what is queued and frees the native arrays. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        for (int i = 0; i < heldCount; i++) {
            held[i].release();
            held[i] = null;
        }
        heldCount = 0;
        messages = 0;
        closed = true;
        arena.close();
    }
}
