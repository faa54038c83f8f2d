package org.vrdma.vswitch.pipeline;

/** Where in the vSwitch a {@link PacketCapture} sees packets. */
public enum CapturePoint {
    /** Inner frames as an ENI sends them, before any check. */
    ENI_TX,
    /** Inner frames as they are delivered to an ENI. */
    ENI_RX,
    /** Whole underlay frames (outer Ethernet/IPv4/UDP, Geneve, inner frame) as they leave the uplink. */
    UNDERLAY_TX,
    /** Underlay datagrams as they arrive, with outer headers rebuilt from the addresses. */
    UNDERLAY_RX
}
