package org.vrdma.verbs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.vrdma.shim.ControlProtocol;
import org.vrdma.shim.VnicClient;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): a CQ armed with {@link
 * IbvCq#reqNotify} puts one event here when a matching completion arrives; {@link #getCqEvent}
 * waits for one ({@code ibv_get_cq_event}), and each event taken must be acknowledged with {@link
 * IbvCq#ackEvents} before the CQ is destroyed. One thread at a time waits on a channel.
 *
 * <p>The device's event loop only enqueues and wakes the waiting thread; it never blocks. On an
 * attached device the channel is a second connection to the vNIC process, bound with a token,
 * which streams one 8-byte event per armed completion; a reader thread of this JVM enqueues them.
 */
public final class IbvCompChannel implements AutoCloseable {
    private final IbvContext context;
    private final ConcurrentLinkedQueue<IbvCq> events = new ConcurrentLinkedQueue<>();
    private volatile Thread waiter;
    private volatile boolean live = true;
    /** CQs using this channel; confined to the loop (embedded) or guarded by the context (attached). */
    int cqs;
    /** The vNIC process's handle of an attached channel, and the connection its events arrive on. */
    final int handle;

    private final SocketChannel stream;

    IbvCompChannel(IbvContext context) {
        this.context = context;
        this.handle = 0;
        this.stream = null;
    }

    private IbvCompChannel(IbvContext context, int handle, SocketChannel stream) {
        this.context = context;
        this.handle = handle;
        this.stream = stream;
    }

    /** CREATE_CHANNEL, then BIND_CHANNEL on a connection of its own, read by a daemon thread. */
    static IbvCompChannel attached(IbvContext context) {
        ByteBuffer r = context.attached.call(ControlProtocol.CREATE_CHANNEL, null);
        int handle = r.getInt();
        r.getInt();
        long token = r.getLong();
        ByteBuffer bind = VnicClient.body(16);
        bind.putInt(handle).putInt(0).putLong(token);
        SocketChannel s;
        try {
            s = context.attached.bind(ControlProtocol.BIND_CHANNEL, bind);
        } catch (IbvException e) {
            AttachedMemory.call(context, ControlProtocol.DESTROY_CHANNEL, handle);
            throw e;
        }
        IbvCompChannel ch = new IbvCompChannel(context, handle, s);
        Thread.ofPlatform().daemon(true).name("vrdma-channel-" + handle).start(ch::readEvents);
        return ch;
    }

    /** Reader thread of an attached channel: one 8-byte cookie per event, until the stream closes. */
    private void readEvents() {
        ByteBuffer event = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (true) {
                event.clear();
                while (event.hasRemaining()) {
                    if (stream.read(event) < 0) {
                        return;
                    }
                }
                IbvCq cq = context.attached.cqByCookie.get(event.getLong(0));
                if (cq != null && live) {
                    onEvent(cq);
                }
            }
        } catch (IOException e) {
            // the channel was destroyed or the vNIC went away
        }
    }

    /** The context. */
    public IbvContext context() {
        return context;
    }

    /**
     * Waits up to {@code timeout} for the next event and returns its CQ, or null on timeout. The
     * CQ is disarmed: call {@link IbvCq#reqNotify} again for the next event.
     *
     * @throws IbvInvalidArgumentException if the channel was destroyed
     */
    public IbvCq getCqEvent(Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        IbvCq cq = events.poll();
        if (cq != null) {
            return taken(cq);
        }
        waiter = Thread.currentThread();
        try {
            while (true) {
                checkLive();
                cq = events.poll();
                if (cq != null) {
                    return taken(cq);
                }
                long leftNs = deadlineNs - System.nanoTime();
                if (leftNs <= 0) {
                    return null;
                }
                LockSupport.parkNanos(this, leftNs);
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        } finally {
            waiter = null;
        }
    }

    /** The next event's CQ if one is pending, else null; never blocks. */
    public IbvCq pollCqEvent() {
        checkLive();
        IbvCq cq = events.poll();
        return cq == null ? null : taken(cq);
    }

    /** Destroys the channel ({@code ibv_destroy_comp_channel}); EBUSY while CQs use it. */
    public void destroy() {
        if (stream != null) {
            synchronized (context) {
                destroyAttached();
            }
            return;
        }
        context.loop.run(this::destroyOnLoop);
    }

    /** Destroys the channel unless that was already done. */
    @Override
    public void close() {
        if (stream != null) {
            synchronized (context) {
                if (live) {
                    destroyAttached();
                }
            }
            return;
        }
        context.loop.closeIfLive(() -> live, this::destroyOnLoop);
    }

    private void destroyAttached() {
        checkLive();
        if (cqs != 0) {
            throw new IbvBusyException(cqs + " completion queues use this channel");
        }
        AttachedMemory.call(context, ControlProtocol.DESTROY_CHANNEL, handle);
        try {
            stream.close();
        } catch (IOException e) {
            // closed already
        }
        live = false;
        context.forget(this);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    private static IbvCq taken(IbvCq cq) {
        cq.onEventTaken();
        return cq;
    }

    /** On the loop: an armed CQ got a matching completion. */
    void onEvent(IbvCq cq) {
        events.offer(cq);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    void dropEventsOf(IbvCq cq) {
        events.removeIf(c -> c == cq);
    }

    void checkLive() {
        if (!live) {
            throw new IbvInvalidArgumentException("completion channel destroyed");
        }
    }

    void destroyOnLoop() {
        checkLive();
        if (cqs != 0) {
            throw new IbvBusyException(cqs + " completion queues use this channel");
        }
        live = false;
        context.channels.remove(this);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }
}
