package org.vrdma.vnic.verbs;

/** Queue pair transport types this device implements. */
public enum QpType {
    /** Reliable connected. */
    RC,
    /** Unreliable datagram. */
    UD
}
