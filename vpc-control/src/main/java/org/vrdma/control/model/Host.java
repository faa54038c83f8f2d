package org.vrdma.control.model;

/** A machine running a vSwitch and its agent, reached on the underlay at {@code underlayIp:underlayPort}. */
public record Host(String id, String name, String underlayIp, int underlayPort, long version) {}
