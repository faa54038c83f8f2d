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
}
