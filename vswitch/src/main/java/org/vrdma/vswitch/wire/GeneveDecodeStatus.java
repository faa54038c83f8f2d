package org.vrdma.vswitch.wire;

import org.vrdma.wire.DecodeStatus;

/**
 * Outcome of decoding a Geneve datagram or an encapsulated underlay frame. Every value but {@link
 * #OK} means the packet is dropped and counted; decoders never throw on malformed input.
 */
public enum GeneveDecodeStatus {
    OK,
    /** The bytes end before a header or the options the header announces. */
    TRUNCATED,
    /** Geneve version other than 0. */
    BAD_VERSION,
    /** An option whose length runs past the options area. */
    BAD_OPTIONS,
    /** A protocol type other than Transparent Ethernet Bridging (0x6558). */
    UNSUPPORTED_PROTOCOL,
    // Underlay frame only:
    NOT_IPV4,
    BAD_IP_HEADER,
    BAD_IP_CHECKSUM,
    IP_FRAGMENT,
    NOT_UDP,
    BAD_LENGTH,
    /** The UDP destination port is not 6081. */
    NOT_GENEVE_PORT;

    /** The status for an underlay frame whose Ethernet/IPv4/UDP headers decoded as {@code ip}. */
    static GeneveDecodeStatus ofUnderlay(DecodeStatus ip) {
        return switch (ip) {
            case OK -> OK;
            case TRUNCATED -> TRUNCATED;
            case NOT_IPV4 -> NOT_IPV4;
            case BAD_IP_HEADER -> BAD_IP_HEADER;
            case BAD_IP_CHECKSUM -> BAD_IP_CHECKSUM;
            case IP_FRAGMENT -> IP_FRAGMENT;
            case NOT_UDP -> NOT_UDP;
            // The remaining values are RoCE-level and never come out of the IPv4/UDP decoder.
            default -> BAD_LENGTH;
        };
    }
}
