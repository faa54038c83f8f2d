package org.vrdma.control.model;

/**
 * Per-ENI bandwidth and how it is shared between the RDMA and TCP traffic classes under load
 * (percentages that add up to 100).
 */
public record QosPolicy(String id, String name, long bandwidthMbps, int rdmaShare, int tcpShare, long version) {}
