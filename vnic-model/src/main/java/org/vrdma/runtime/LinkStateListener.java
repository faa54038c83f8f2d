package org.vrdma.runtime;

/**
 * A frame sink with a link whose state follows its attachment point: the vSwitch tells an ENI's
 * vNIC when the ENI's vRDMA is switched on or off, and the vNIC's port goes up or down.
 */
@FunctionalInterface
public interface LinkStateListener {
    /** Called on the owner's thread whenever the link is (re)configured; {@code up} may be unchanged. */
    void onLinkState(boolean up);
}
