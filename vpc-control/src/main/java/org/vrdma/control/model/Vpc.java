package org.vrdma.control.model;

/** A virtual private cloud: an address space isolated on the overlay by its VNI. */
public record Vpc(String id, String name, String cidr, int vni, long version) {}
