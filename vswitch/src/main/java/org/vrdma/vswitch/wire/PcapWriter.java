package org.vrdma.vswitch.wire;

import io.netty.buffer.ByteBuf;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes classic libpcap files of Ethernet frames (link type 1), with nanosecond ({@code
 * a1b23c4d}) or microsecond ({@code a1b2c3d4}) timestamps, little-endian. Timestamps come from the
 * caller (real or virtual time); the writer never reads a clock.
 *
 * <p>Thread-safe: records from several event loops are written whole, one at a time. Frames are
 * copied out during {@link #write}; the caller keeps ownership of its buffers.
 */
public final class PcapWriter implements Closeable {
    /** Timestamp resolution of the file, chosen by its magic number. */
    public enum Resolution {
        NANOSECONDS(0xA1B23C4D, 1),
        MICROSECONDS(0xA1B2C3D4, 1_000);

        final int magic;
        final int nsPerUnit;

        Resolution(int magic, int nsPerUnit) {
            this.magic = magic;
            this.nsPerUnit = nsPerUnit;
        }
    }

    public static final int LINKTYPE_ETHERNET = 1;
    public static final int DEFAULT_SNAP_LENGTH_BYTES = 65535;

    private static final int GLOBAL_HEADER_BYTES = 24;
    private static final int RECORD_HEADER_BYTES = 16;
    private static final long NS_PER_SECOND = 1_000_000_000L;

    private final OutputStream out;
    private final Resolution resolution;
    private final int snapLengthBytes;
    private final byte[] header = new byte[GLOBAL_HEADER_BYTES];

    /**
     * Writes the file header to {@code out}, which this writer then owns and closes.
     *
     * @param snapLengthBytes frames longer than this are cut to it (their original length is kept)
     */
    public PcapWriter(OutputStream out, Resolution resolution, int snapLengthBytes) throws IOException {
        if (snapLengthBytes <= 0) {
            throw new IllegalArgumentException("snap length " + snapLengthBytes);
        }
        this.out = out;
        this.resolution = resolution;
        this.snapLengthBytes = snapLengthBytes;
        putIntLE(0, resolution.magic);
        putShortLE(4, 2); // version 2.4
        putShortLE(6, 4);
        putIntLE(8, 0); // GMT offset
        putIntLE(12, 0); // timestamp accuracy
        putIntLE(16, snapLengthBytes);
        putIntLE(20, LINKTYPE_ETHERNET);
        out.write(header, 0, GLOBAL_HEADER_BYTES);
    }

    /** A buffered nanosecond-resolution file at {@code path}, created or truncated. */
    public static PcapWriter create(Path path) throws IOException {
        return new PcapWriter(
                new BufferedOutputStream(Files.newOutputStream(path)),
                Resolution.NANOSECONDS,
                DEFAULT_SNAP_LENGTH_BYTES);
    }

    /**
     * Appends one frame, the readable bytes of {@code frame} (indexes not moved, not released),
     * stamped {@code timestampNs} nanoseconds after the Unix epoch.
     */
    public synchronized void write(long timestampNs, ByteBuf frame) throws IOException {
        int lengthBytes = frame.readableBytes();
        int capturedBytes = writeRecordHeader(timestampNs, lengthBytes);
        frame.getBytes(frame.readerIndex(), out, capturedBytes);
    }

    /** Appends one frame from an array. */
    public synchronized void write(long timestampNs, byte[] frame, int offset, int lengthBytes) throws IOException {
        int capturedBytes = writeRecordHeader(timestampNs, lengthBytes);
        out.write(frame, offset, capturedBytes);
    }

    private int writeRecordHeader(long timestampNs, int lengthBytes) throws IOException {
        int capturedBytes = Math.min(lengthBytes, snapLengthBytes);
        long seconds = Math.floorDiv(timestampNs, NS_PER_SECOND);
        long fraction = Math.floorMod(timestampNs, NS_PER_SECOND) / resolution.nsPerUnit;
        putIntLE(0, (int) seconds);
        putIntLE(4, (int) fraction);
        putIntLE(8, capturedBytes);
        putIntLE(12, lengthBytes);
        out.write(header, 0, RECORD_HEADER_BYTES);
        return capturedBytes;
    }

    public synchronized void flush() throws IOException {
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }

    private void putIntLE(int at, int v) {
        header[at] = (byte) v;
        header[at + 1] = (byte) (v >>> 8);
        header[at + 2] = (byte) (v >>> 16);
        header[at + 3] = (byte) (v >>> 24);
    }

    private void putShortLE(int at, int v) {
        header[at] = (byte) v;
        header[at + 1] = (byte) (v >>> 8);
    }
}
