package org.vrdma.control.agent;

/** A QoS policy an ENI of this host uses: its meter rate and the RDMA/TCP class shares (percent). */
public record QosConfig(String id, long bandwidthMbps, int rdmaShare, int tcpShare) {}
