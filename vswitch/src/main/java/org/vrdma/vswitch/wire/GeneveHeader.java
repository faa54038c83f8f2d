package org.vrdma.vswitch.wire;

import io.netty.buffer.ByteBuf;

/**
 * Mutable, reusable holder of a Geneve header (RFC 8926) and its options. The options are kept as
 * their wire bytes in a fixed array (at most 252 bytes, the most the 6-bit length field allows), so
 * building, decoding and iterating them ({@link GeneveOptionCursor}) allocates nothing. Options are
 * copied in on decode: they are small, and a hop may rewrite them (INT telemetry) before
 * forwarding.
 *
 * <p>Not thread-safe; one per event loop.
 */
public final class GeneveHeader {
    /** Protocol type of an Ethernet frame payload: Transparent Ethernet Bridging. */
    public static final int PROTOCOL_ETHERNET = 0x6558;

    public static final int BASE_HEADER_BYTES = 8;
    public static final int OPTION_HEADER_BYTES = 4;
    /** 63 four-byte words: the 6-bit options length field's limit. */
    public static final int MAX_OPTIONS_BYTES = 63 * 4;
    /** 31 four-byte words: the 5-bit option length field's limit. */
    public static final int MAX_OPTION_DATA_BYTES = 31 * 4;

    /** Geneve version; 0 is the only one defined. */
    public int version;
    /** O bit: a control (OAM) packet, not data. */
    public boolean oam;
    /** C bit: at least one option is critical. {@link #addOption} sets it for a critical option. */
    public boolean critical;
    /** Protocol type of the payload, an Ethertype. */
    public int protocolType;
    /** Virtual network identifier, 24 bits: the VPC. */
    public int vni;

    /** After decode: absolute index of the payload (the inner Ethernet frame) in the decoded buffer. */
    public int payloadOffset;
    /** After decode: payload length in bytes. */
    public int payloadLengthBytes;

    final byte[] options = new byte[MAX_OPTIONS_BYTES];
    int optionsLengthBytes;

    public GeneveHeader() {
        clear();
    }

    /** Resets to version 0, no flags, Ethernet payload, VNI 0 and no options. */
    public void clear() {
        version = 0;
        oam = false;
        critical = false;
        protocolType = PROTOCOL_ETHERNET;
        vni = 0;
        payloadOffset = 0;
        payloadLengthBytes = 0;
        optionsLengthBytes = 0;
    }

    /** Bytes of options, without the 8-byte base header. */
    public int optionsLengthBytes() {
        return optionsLengthBytes;
    }

    /** Bytes of the whole Geneve header with its options. */
    public int headerLengthBytes() {
        return BASE_HEADER_BYTES + optionsLengthBytes;
    }

    /**
     * Appends an option.
     *
     * @param optionClass 16-bit option class (namespace)
     * @param type 8-bit type; its high bit marks the option critical
     * @param data the option data: {@code dataLengthBytes} bytes from {@code data.readerIndex()}, a
     *     multiple of 4; indexes not moved, not released
     * @throws IllegalArgumentException if the data length is not a multiple of 4, exceeds 124 bytes,
     *     or the options would exceed 252 bytes
     */
    public void addOption(int optionClass, int type, ByteBuf data, int dataLengthBytes) {
        int at = reserveOption(optionClass, type, dataLengthBytes);
        data.getBytes(data.readerIndex(), options, at, dataLengthBytes);
    }

    /** As {@link #addOption(int, int, ByteBuf, int)}, from an array. */
    public void addOption(int optionClass, int type, byte[] data, int offset, int dataLengthBytes) {
        int at = reserveOption(optionClass, type, dataLengthBytes);
        System.arraycopy(data, offset, options, at, dataLengthBytes);
    }

    private int reserveOption(int optionClass, int type, int dataLengthBytes) {
        if ((dataLengthBytes & 3) != 0 || dataLengthBytes < 0 || dataLengthBytes > MAX_OPTION_DATA_BYTES) {
            throw new IllegalArgumentException("option data of " + dataLengthBytes + " bytes");
        }
        int at = optionsLengthBytes;
        if (at + OPTION_HEADER_BYTES + dataLengthBytes > MAX_OPTIONS_BYTES) {
            throw new IllegalArgumentException("options exceed " + MAX_OPTIONS_BYTES + " bytes");
        }
        options[at] = (byte) (optionClass >>> 8);
        options[at + 1] = (byte) optionClass;
        options[at + 2] = (byte) type;
        options[at + 3] = (byte) (dataLengthBytes >>> 2);
        optionsLengthBytes = at + OPTION_HEADER_BYTES + dataLengthBytes;
        critical |= (type & GeneveOptionCursor.CRITICAL_TYPE_BIT) != 0;
        return at + OPTION_HEADER_BYTES;
    }
}
