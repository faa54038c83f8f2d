package org.vrdma.vswitch.qos;

/**
 * One direction of an ENI's QoS: a total rate for the ENI, then two traffic classes (RDMA = RoCEv2
 * on UDP 4791, TCP/IP = everything else) that share it by weight (deficit round robin) while both
 * are backlogged, each capped by its own ceiling. A class alone may use the whole ENI rate unless
 * its ceiling says otherwise.
 *
 * @param rateBps ENI rate; 0 = unlimited (no metering at all)
 * @param burstBytes ENI bucket depth
 * @param rdmaCeilBps RDMA class ceiling; 0 = the ENI rate
 * @param tcpCeilBps TCP/IP class ceiling; 0 = the ENI rate
 * @param rdmaWeight RDMA share weight, positive
 * @param tcpWeight TCP/IP share weight, positive
 * @param classQueueBytes bytes each class may queue while waiting for tokens; 0 = police (drop
 *     non-conforming packets at once)
 */
public record QosConfig(
        long rateBps,
        long burstBytes,
        long rdmaCeilBps,
        long tcpCeilBps,
        int rdmaWeight,
        int tcpWeight,
        long classQueueBytes) {
    /** No limits. */
    public static final QosConfig UNLIMITED = new QosConfig(0, 64 * 1024, 0, 0, 1, 1, 0);

    public QosConfig {
        if (rateBps < 0 || rdmaCeilBps < 0 || tcpCeilBps < 0 || classQueueBytes < 0 || burstBytes <= 0) {
            throw new IllegalArgumentException("negative rate or queue, or no burst: " + this);
        }
        if (rdmaWeight <= 0 || tcpWeight <= 0) {
            throw new IllegalArgumentException("weights must be positive: " + rdmaWeight + ", " + tcpWeight);
        }
    }

    /** A shaper at {@code rateBps} with the given weights, 64 KiB burst, 1 MiB queue per class. */
    public static QosConfig shaped(long rateBps, int rdmaWeight, int tcpWeight) {
        return new QosConfig(rateBps, 64 * 1024, 0, 0, rdmaWeight, tcpWeight, 1 << 20);
    }

    public QosConfig withCeilings(long rdmaCeilBps, long tcpCeilBps) {
        return new QosConfig(rateBps, burstBytes, rdmaCeilBps, tcpCeilBps, rdmaWeight, tcpWeight, classQueueBytes);
    }

    public QosConfig withClassQueueBytes(long bytes) {
        return new QosConfig(rateBps, burstBytes, rdmaCeilBps, tcpCeilBps, rdmaWeight, tcpWeight, bytes);
    }

    public QosConfig withBurstBytes(long bytes) {
        return new QosConfig(rateBps, bytes, rdmaCeilBps, tcpCeilBps, rdmaWeight, tcpWeight, classQueueBytes);
    }

    public boolean unlimited() {
        return rateBps == 0;
    }
}
