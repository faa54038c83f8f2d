package org.vrdma.vswitch.pipeline;

import io.netty.buffer.ByteBuf;
import org.vrdma.cc.IntTelemetry;
import org.vrdma.vswitch.wire.GeneveHeader;
import org.vrdma.vswitch.wire.GeneveOptionCursor;

/**
 * The INT (in-band network telemetry) Geneve option: the sending vSwitch reserves room for a fixed
 * number of hop records, every egress port on the path (the vSwitch uplink, fabric switches) fills
 * the next record in place as the packet leaves, and the receiving vSwitch hands the records to the
 * vNIC as an {@link IntTelemetry} (what HPCC needs).
 *
 * <pre>
 * option class 0xFFF0 (Geneve "experimental use" range), type 0x01 (not critical), length 1 + 6n words
 * data:  0: hop count (8) | max hops (8) | reserved (16)
 *        4 + 24 i, for hop i < max hops:
 *           queue bytes (32, saturating) | link rate Mbit/s (32) | tx bytes (64) | timestamp ns (64)
 * </pre>
 *
 * All fields are big-endian. At most {@link #MAX_HOPS} records fit the 124-byte option data limit.
 * Allocation-free; stateless.
 */
public final class IntOption {
    public static final int OPTION_CLASS = 0xFFF0;
    public static final int TYPE = 0x01;
    public static final int HOP_RECORD_BYTES = 24;
    public static final int HEADER_BYTES = 4;
    /** (124 - 4) / 24. */
    public static final int MAX_HOPS = 5;

    private static final byte[] ZEROS = new byte[GeneveHeader.MAX_OPTION_DATA_BYTES];

    private IntOption() {}

    /** Option data bytes for {@code maxHops} records. */
    public static int dataBytes(int maxHops) {
        return HEADER_BYTES + HOP_RECORD_BYTES * maxHops;
    }

    /** Bytes the option adds to a Geneve header, option header included. */
    public static int optionBytes(int maxHops) {
        return maxHops == 0 ? 0 : GeneveHeader.OPTION_HEADER_BYTES + dataBytes(maxHops);
    }

    /** Appends an empty INT option with room for {@code maxHops} records (1..{@link #MAX_HOPS}). */
    public static void reserve(GeneveHeader h, int maxHops) {
        if (maxHops < 1 || maxHops > MAX_HOPS) {
            throw new IllegalArgumentException("maxHops must be 1.." + MAX_HOPS + ": " + maxHops);
        }
        int before = h.optionsLengthBytes();
        h.addOption(OPTION_CLASS, TYPE, ZEROS, 0, dataBytes(maxHops));
        // Patch max hops into the data's first word through a second, tiny write.
        h.patchOptionByte(before + GeneveHeader.OPTION_HEADER_BYTES + 1, maxHops);
    }

    /**
     * Finds the INT option data in the Geneve header at {@code geneveIndex} of {@code buf}.
     *
     * @return the absolute index of the option data, or -1 when absent or malformed
     */
    public static int find(ByteBuf buf, int geneveIndex, int end) {
        if (geneveIndex < 0 || end - geneveIndex < GeneveHeader.BASE_HEADER_BYTES) {
            return -1;
        }
        int optionsEnd = geneveIndex + GeneveHeader.BASE_HEADER_BYTES + (buf.getUnsignedByte(geneveIndex) & 0x3F) * 4;
        if (optionsEnd > end) {
            return -1;
        }
        int at = geneveIndex + GeneveHeader.BASE_HEADER_BYTES;
        while (at + GeneveHeader.OPTION_HEADER_BYTES <= optionsEnd) {
            int dataBytes = (buf.getUnsignedByte(at + 3) & 0x1F) * 4;
            int data = at + GeneveHeader.OPTION_HEADER_BYTES;
            if (data + dataBytes > optionsEnd) {
                return -1;
            }
            if (buf.getUnsignedShort(at) == OPTION_CLASS
                    && buf.getUnsignedByte(at + 2) == TYPE
                    && dataBytes >= HEADER_BYTES) {
                return data;
            }
            at = data + dataBytes;
        }
        return -1;
    }

    /**
     * Fills the next hop record of the option whose data starts at {@code dataIndex}.
     *
     * @return false when every reserved record is already used
     */
    public static boolean stamp(
            ByteBuf buf, int dataIndex, long queueBytes, long txBytes, long timestampNs, long linkRateBps) {
        int hops = buf.getUnsignedByte(dataIndex);
        int maxHops = buf.getUnsignedByte(dataIndex + 1);
        if (hops >= maxHops || hops >= MAX_HOPS) {
            return false;
        }
        int at = dataIndex + HEADER_BYTES + hops * HOP_RECORD_BYTES;
        buf.setInt(at, (int) Math.min(queueBytes, 0xFFFF_FFFFL));
        buf.setInt(at + 4, (int) Math.min(linkRateBps / 1_000_000L, 0xFFFF_FFFFL));
        buf.setLong(at + 8, txBytes);
        buf.setLong(at + 16, timestampNs);
        buf.setByte(dataIndex, hops + 1);
        return true;
    }

    /**
     * Reads the records of the option the cursor stands on into {@code into} (reset first).
     *
     * @return false if the cursor is not on an INT option or its hop count is inconsistent
     */
    public static boolean read(GeneveOptionCursor cursor, IntTelemetry into) {
        into.reset();
        if (!isIntOption(cursor) || cursor.dataLengthBytes() < HEADER_BYTES) {
            return false;
        }
        int hops = cursor.dataByte(0) & 0xFF;
        if (HEADER_BYTES + hops * HOP_RECORD_BYTES > cursor.dataLengthBytes() || hops > IntTelemetry.MAX_HOPS) {
            return false;
        }
        for (int i = 0; i < hops; i++) {
            int at = HEADER_BYTES + i * HOP_RECORD_BYTES;
            long queue = cursor.dataInt(at) & 0xFFFF_FFFFL;
            long rateBps = (cursor.dataInt(at + 4) & 0xFFFF_FFFFL) * 1_000_000L;
            long tx = ((long) cursor.dataInt(at + 8) << 32) | (cursor.dataInt(at + 12) & 0xFFFF_FFFFL);
            long ts = ((long) cursor.dataInt(at + 16) << 32) | (cursor.dataInt(at + 20) & 0xFFFF_FFFFL);
            into.addHop(queue, tx, ts, rateBps);
        }
        return true;
    }

    public static boolean isIntOption(GeneveOptionCursor cursor) {
        return cursor.optionClass() == OPTION_CLASS && cursor.type() == TYPE;
    }
}
