package org.vrdma.control.agent.vswitch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.vrdma.control.agent.EniConfig;
import org.vrdma.runtime.FrameSink;

/**
 * The default ENI endpoints until a vNIC is attached: each ENI's delivered frames are counted and
 * copied into a bounded queue that callers (tests, tools) read, and frames can be injected as if
 * the ENI sent them. Looked up by the control plane's ENI id.
 */
public final class QueueAttachments implements EniAttachmentFactory {
    /** Frames a queue keeps before it counts further ones as overflow. */
    public static final int DEFAULT_CAPACITY = 4096;

    private final int capacity;
    private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();

    public QueueAttachments() {
        this(DEFAULT_CAPACITY);
    }

    public QueueAttachments(int capacity) {
        this.capacity = capacity;
    }

    @Override
    public EniAttachment attach(EniConfig eni) {
        Endpoint e = new Endpoint(eni, capacity);
        endpoints.put(eni.id(), e);
        return e;
    }

    /** The endpoint of ENI {@code eniId}, or null when it is not attached. */
    public Endpoint endpoint(String eniId) {
        return endpoints.get(eniId);
    }

    /** The attached endpoints by ENI id. */
    public Map<String, Endpoint> endpoints() {
        return Map.copyOf(endpoints);
    }

    /** One ENI's endpoint. */
    public final class Endpoint implements EniAttachment, FrameSink {
        private final EniConfig eni;
        private final BlockingQueue<byte[]> received;
        private final AtomicLong delivered = new AtomicLong();
        private final AtomicLong overflow = new AtomicLong();
        private volatile EniPort port;

        Endpoint(EniConfig eni, int capacity) {
            this.eni = eni;
            this.received = new LinkedBlockingQueue<>(capacity);
        }

        public EniConfig eni() {
            return eni;
        }

        @Override
        public FrameSink sink() {
            return this;
        }

        @Override
        public void onFrame(ByteBuf frame, long nowNs) {
            try {
                delivered.incrementAndGet();
                if (!received.offer(ByteBufUtil.getBytes(frame))) {
                    overflow.incrementAndGet();
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void attached(EniPort p) {
            port = p;
        }

        @Override
        public void detached() {
            port = null;
            endpoints.remove(eni.id(), this);
        }

        /** The port, or null when the ENI is not (or no longer) attached. */
        public EniPort port() {
            return port;
        }

        /** Sends {@code frame} into the vSwitch as this ENI. */
        public void inject(byte[] frame) {
            EniPort p = port;
            if (p == null) {
                throw new IllegalStateException("ENI " + eni.id() + " is not attached");
            }
            p.send(frame);
        }

        /** The next delivered frame, waiting at most {@code timeout}; null when none came. */
        public byte[] poll(Duration timeout) throws InterruptedException {
            return received.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        /** Drops the queued frames. */
        public void clear() {
            received.clear();
        }

        /** Frames delivered to the ENI so far. */
        public long delivered() {
            return delivered.get();
        }

        /** Frames delivered while the queue was full (counted, not kept). */
        public long overflow() {
            return overflow.get();
        }
    }
}
