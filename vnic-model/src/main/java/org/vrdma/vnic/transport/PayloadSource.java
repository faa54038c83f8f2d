package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;

/**
 * Where a packet's payload is read from when the codec builds the frame: a work request's gather
 * list. The codec asks for the bytes once, straight into the frame, so a packet's payload is copied
 * from application memory exactly once on the way out.
 */
@FunctionalInterface
public interface PayloadSource {
    /**
     * Appends {@code lengthBytes} bytes of the message from {@code messageOffset} at {@code dst}'s
     * writer index.
     *
     * @throws RuntimeException as the memory reports it (a bad address); nothing is sent then
     */
    void gather(long messageOffset, ByteBuf dst, int lengthBytes);

    /**
     * The direct buffer that holds bytes {@code [messageOffset, messageOffset + lengthBytes)} of the
     * message contiguously, or null when they are split, on the heap or not in a buffer; {@link
     * #contiguousIndex} gives where.
     */
    default ByteBuf contiguousBuffer(long messageOffset, int lengthBytes) {
        return null;
    }

    /** The index in {@link #contiguousBuffer}'s buffer of message byte {@code messageOffset}. */
    default int contiguousIndex(long messageOffset) {
        throw new UnsupportedOperationException();
    }
}
