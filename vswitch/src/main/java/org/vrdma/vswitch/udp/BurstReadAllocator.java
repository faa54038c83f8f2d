package org.vrdma.vswitch.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * Receive buffers of a fixed size, read in bursts: after a wake-up the channel keeps reading while
 * the kernel hands back large reads (a GRO batch or a full {@code recvmmsg} of at least half the
 * buffer: the socket probably holds more), up to {@code maxReads}, and stops after a smaller read
 * instead of reading again only to get {@code EAGAIN}. That last read is a system call on every
 * wake-up of a request/response exchange, made before the response can leave. Netty's epoll
 * channels are level-triggered, so a datagram still queued after a short read wakes the loop again
 * on its next turn, after the tasks (and sends) this read queued.
 */
final class BurstReadAllocator extends FixedRecvByteBufAllocator {
    private final int continueAtBytes;

    BurstReadAllocator(int bufferBytes, int maxReads) {
        super(bufferBytes);
        maxMessagesPerRead(maxReads);
        respectMaybeMoreData(false);
        this.continueAtBytes = bufferBytes / 2;
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
