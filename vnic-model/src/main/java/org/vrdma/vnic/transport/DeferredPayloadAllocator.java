package org.vrdma.vnic.transport;

import io.netty.buffer.ByteBuf;

/**
 * A frame allocator whose frames may leave with their payload gathered at send time from where it
 * lies, instead of copied into the frame when it is built: an underlay that sends with scatter-gather
 * I/O points the kernel at the memory region itself, so the payload is copied once on the way out
 * (by the kernel) instead of twice.
 *
 * <p>The codec asks right after allocating the frame and writing its headers. If the allocator
 * agrees, the frame's bytes {@code [index, index + lengthBytes)} are left unwritten (the codec
 * still computes the ICRC over the real payload) and the allocator takes over filling them: it sends
 * them from {@code address}, or copies them in before anything else reads the frame. The memory at
 * {@code address} must stay valid until the frame was sent, which a posted work request's memory
 * does until it completes.
 */
public interface DeferredPayloadAllocator {
    /**
     * Whether the payload of {@code frame} (just allocated by this allocator) at {@code index} may be
     * gathered from native {@code address} when the frame is sent; false: the caller writes it.
     */
    boolean deferPayload(ByteBuf frame, int index, int lengthBytes, long address);
}
