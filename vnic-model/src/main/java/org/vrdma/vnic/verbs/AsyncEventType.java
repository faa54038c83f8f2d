package org.vrdma.vnic.verbs;

/** Asynchronous events ({@code enum ibv_event_type}) this device raises. */
public enum AsyncEventType {
    CQ_ERR,
    QP_FATAL,
    QP_REQ_ERR,
    QP_ACCESS_ERR,
    SQ_DRAINED,
    QP_LAST_WQE_REACHED,
    SRQ_LIMIT_REACHED,
    SRQ_ERR,
    /** A connected QP in RTR received its first packet (source: the QP). */
    COMM_EST,
    /** The port became active (source: the port number, an {@link Integer}). */
    PORT_ACTIVE,
    /** The port went down (source: the port number, an {@link Integer}). */
    PORT_ERR,
    /** The device is gone (source: the device). */
    DEVICE_FATAL
}
