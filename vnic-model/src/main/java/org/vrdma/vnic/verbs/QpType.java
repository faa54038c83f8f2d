package org.vrdma.vnic.verbs;

/** Queue pair transport types this device implements. */
public enum QpType {
    /** Reliable connected. */
    RC,
    /** Unreliable connected: SEND and RDMA WRITE to one peer, no ACKs, a lost packet drops its message. */
    UC,
    /** Unreliable datagram. */
    UD
}
