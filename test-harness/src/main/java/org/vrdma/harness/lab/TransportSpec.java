package org.vrdma.harness.lab;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Reliable-transport settings of every ENI (see {@code org.vrdma.vnic.transport.TransportConfig}).
 *
 * @param recovery {@code sr} (selective repeat) or {@code gbn} (go-back-N)
 * @param mtuBytes path MTU: 256, 512, 1024, 2048 or 4096
 * @param windowBytes TX window per QP; 0 = two bandwidth-delay products of the host link's longest
 *     path (one for the data in flight, one for ACK coalescing and the ACK's way back)
 * @param ackCoalescePackets the responder ACKs at least every this many packets
 * @param minRtoUs floor of the retransmission timeout
 * @param messageBytes largest RDMA WRITE a flow is cut into (flows are sent as several WRITEs)
 * @param sendQueueDepth outstanding work requests per QP
 * @param payload {@code bytes} (default): packets carry their payload's bytes, copied out of and into
 *     memory, with an ICRC over them, so transfers are byte-exact; {@code length}: in virtual time,
 *     packets carry only their payload's length (memory regions keep no bytes, frames no ICRC), for
 *     labs that measure the network (FCTs, queues, counters) and check no data; timing, sizes and
 *     every counter are those of {@code bytes}. Other backends always carry bytes.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TransportSpec(
        String recovery,
        Integer mtuBytes,
        Long windowBytes,
        Integer ackCoalescePackets,
        Long minRtoUs,
        Integer messageBytes,
        Integer sendQueueDepth,
        String payload) {
    public static final String PAYLOAD_BYTES = "bytes";
    public static final String PAYLOAD_LENGTH = "length";

    public static final TransportSpec DEFAULT = new TransportSpec("sr", 4096, 0L, 4, 100L, 65536, 64, null);

    /** A copy with {@code payload} set. */
    public TransportSpec withPayload(String payload) {
        return new TransportSpec(
                recovery, mtuBytes, windowBytes, ackCoalescePackets, minRtoUs, messageBytes, sendQueueDepth, payload);
    }

    /** Whether packets carry only their payload's length (see {@code payload}). */
    public boolean lengthOnly() {
        return PAYLOAD_LENGTH.equals(payload);
    }

    public TransportSpec withDefaults() {
        return new TransportSpec(
                recovery != null ? recovery : DEFAULT.recovery,
                mtuBytes != null ? mtuBytes : DEFAULT.mtuBytes,
                windowBytes != null ? windowBytes : DEFAULT.windowBytes,
                ackCoalescePackets != null ? ackCoalescePackets : DEFAULT.ackCoalescePackets,
                minRtoUs != null ? minRtoUs : DEFAULT.minRtoUs,
                messageBytes != null ? messageBytes : DEFAULT.messageBytes,
                sendQueueDepth != null ? sendQueueDepth : DEFAULT.sendQueueDepth,
                // Left out when not given, so labs that carry bytes read as before.
                payload);
    }
}
