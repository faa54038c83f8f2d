package org.vrdma.control.agent.vswitch;

import org.vrdma.runtime.FrameSink;

/**
 * The local endpoint of one ENI on a host: what receives the frames the vSwitch delivers to the ENI
 * and, once the port exists, sends the ENI's frames into the vSwitch. A vNIC, a TAP device or a
 * test queue implements it; an {@link EniAttachmentFactory} makes one per ENI.
 */
public interface EniAttachment {
    /**
     * Receives the frames delivered to the ENI. It is called on the vSwitch's event loop and owns
     * each frame (it must release it).
     */
    FrameSink sink();

    /** The ENI's port now exists: frames the endpoint sends go through {@code port}. */
    default void attached(EniPort port) {}

    /** The ENI's port is gone (ENI removed, or replaced because its address changed). */
    default void detached() {}
}
