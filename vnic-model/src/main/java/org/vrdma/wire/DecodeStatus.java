package org.vrdma.wire;

/**
 * Outcome of decoding a frame. Every value but {@link #OK} means the frame is dropped and counted;
 * decoders report these instead of throwing, whatever bytes they are given.
 */
public enum DecodeStatus {
    OK,
    /** The frame ends before a header it announces, or before the length its IP header gives. */
    TRUNCATED,
    /** The Ethernet type is not IPv4 (0x0800), or the IP version is not 4. */
    NOT_IPV4,
    /** IPv4 header length below 20 bytes, or total length smaller than the header. */
    BAD_IP_HEADER,
    BAD_IP_CHECKSUM,
    /** A fragment (MF set or non-zero offset): RoCEv2 is never fragmented. */
    IP_FRAGMENT,
    NOT_UDP,
    /** The UDP destination port is not 4791. */
    NOT_ROCE_PORT,
    /** Lengths that disagree: UDP vs IP, or a RoCE packet too short for its opcode or not 4-aligned. */
    BAD_LENGTH,
    UNKNOWN_OPCODE,
    /** BTH transport header version other than 0. */
    BAD_TRANSPORT_VERSION,
    /** Pad count larger than the padded payload, or non-zero where the opcode has no payload. */
    BAD_PAD,
    BAD_ICRC
}
