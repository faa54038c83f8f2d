package org.vrdma.vswitch.wire;

import io.netty.buffer.ByteBuf;

/**
 * Walks the options of a {@link GeneveHeader} without allocating: {@code reset(h)}, then {@code
 * while (cursor.next()) { ... }}. Reusable; not thread-safe. The header must not change during the
 * walk.
 */
public final class GeneveOptionCursor {
    static final int CRITICAL_TYPE_BIT = 0x80;

    private GeneveHeader header;
    private int next;
    private int current = -1;

    /** Starts a walk over {@code h}'s options. */
    public GeneveOptionCursor reset(GeneveHeader h) {
        header = h;
        next = 0;
        current = -1;
        return this;
    }

    /** Moves to the next option; false when there is none. */
    public boolean next() {
        if (header == null || next + GeneveHeader.OPTION_HEADER_BYTES > header.optionsLengthBytes) {
            current = -1;
            return false;
        }
        current = next;
        next = current + GeneveHeader.OPTION_HEADER_BYTES + dataLengthBytes();
        return true;
    }

    public int optionClass() {
        return ((header.options[current] & 0xFF) << 8) | (header.options[current + 1] & 0xFF);
    }

    /** The 8-bit type, critical bit included. */
    public int type() {
        return header.options[current + 2] & 0xFF;
    }

    /** True if a receiver that does not know this option must drop the packet. */
    public boolean isCritical() {
        return (type() & CRITICAL_TYPE_BIT) != 0;
    }

    public int dataLengthBytes() {
        return (header.options[current + 3] & 0x1F) * 4;
    }

    /** Byte {@code i} of the option data. */
    public byte dataByte(int i) {
        return header.options[current + GeneveHeader.OPTION_HEADER_BYTES + i];
    }

    /** The big-endian int at {@code offset} of the option data. */
    public int dataInt(int offset) {
        int at = current + GeneveHeader.OPTION_HEADER_BYTES + offset;
        byte[] o = header.options;
        return ((o[at] & 0xFF) << 24) | ((o[at + 1] & 0xFF) << 16) | ((o[at + 2] & 0xFF) << 8) | (o[at + 3] & 0xFF);
    }

    /** Appends the option data to {@code out}. */
    public void writeData(ByteBuf out) {
        out.writeBytes(header.options, current + GeneveHeader.OPTION_HEADER_BYTES, dataLengthBytes());
    }
}
