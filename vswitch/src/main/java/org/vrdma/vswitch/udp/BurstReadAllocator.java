package org.vrdma.vswitch.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * Receive buffers of a fixed size, read in bursts: after a wake-up the channel reads until the
 * socket is empty ({@code EAGAIN}) or {@code maxReads} reads, except that a read of small datagrams
 * only (at most {@link #SMALL_READ_BYTES}: ACKs, CNPs, small SENDs) ends the burst at once. In a
 * request/response exchange that is the whole wake-up, and the read that would only return {@code
 * EAGAIN} is a system call made before the response can leave. Netty's epoll channels are
 * level-triggered, so a datagram still queued wakes the loop again on its next turn, after the tasks
 * (and sends) this read queued. Large reads (data, GRO batches) keep reading to the end as before:
 * ending those bursts early too was measured to cost bandwidth (more, smaller flushes and GSO
 * sends per RDMA WRITE).
 */
final class BurstReadAllocator extends FixedRecvByteBufAllocator {
    private final int continueAtBytes;

    /** A read of at most this many bytes held only small datagrams: control packets, small messages. */
    static final int SMALL_READ_BYTES = 2048;

    BurstReadAllocator(int bufferBytes, int maxReads) {
        super(bufferBytes);
        maxMessagesPerRead(maxReads);
        respectMaybeMoreData(false);
        this.continueAtBytes = SMALL_READ_BYTES + 1;
    }

    @Override
    public Handle newHandle() {
        return new BurstHandle((ExtendedHandle) super.newHandle(), continueAtBytes);
    }

    /** Delegates to the fixed-size handle; stops the read loop after a short read. */
    private static final class BurstHandle implements RecvByteBufAllocator.ExtendedHandle {
        private final ExtendedHandle delegate;
        private final int continueAtBytes;

        BurstHandle(ExtendedHandle delegate, int continueAtBytes) {
            this.delegate = delegate;
            this.continueAtBytes = continueAtBytes;
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate.lastBytesRead() >= continueAtBytes && delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public boolean continueReading() {
            return delegate.lastBytesRead() >= continueAtBytes && delegate.continueReading();
        }

        @Override
        @SuppressWarnings("deprecation")
        public ByteBuf allocate(ByteBufAllocator alloc) {
            return delegate.allocate(alloc);
        }

        @Override
        @SuppressWarnings("deprecation")
        public int guess() {
            return delegate.guess();
        }

        @Override
        @SuppressWarnings("deprecation")
        public void reset(ChannelConfig config) {
            delegate.reset(config);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void incMessagesRead(int numMessages) {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void lastBytesRead(int bytes) {
            delegate.lastBytesRead(bytes);
        }

        @Override
        @SuppressWarnings("deprecation")
        public int lastBytesRead() {
            return delegate.lastBytesRead();
        }

        @Override
        @SuppressWarnings("deprecation")
        public void attemptedBytesRead(int bytes) {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        @SuppressWarnings("deprecation")
        public int attemptedBytesRead() {
            return delegate.attemptedBytesRead();
        }

        @Override
        @SuppressWarnings("deprecation")
        public void readComplete() {
            delegate.readComplete();
        }
    }
}
