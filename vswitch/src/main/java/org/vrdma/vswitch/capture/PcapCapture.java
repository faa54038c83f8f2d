package org.vrdma.vswitch.capture;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.vrdma.vswitch.pipeline.CapturePoint;
import org.vrdma.vswitch.pipeline.PacketCapture;
import org.vrdma.vswitch.wire.PcapWriter;

/**
 * A {@link PacketCapture} that writes the chosen capture points to a pcap file. Underlay frames
 * decode as Ethernet/IPv4/UDP/Geneve/Ethernet/IPv4/UDP/InfiniBand; inner frames as
 * Ethernet/IPv4/UDP/InfiniBand. Timestamps are the switch's {@code nowNs} plus {@code
 * epochOffsetNs} (real time: wall clock minus {@code System.nanoTime()} at start; virtual time:
 * any origin). A write error stops the capture and is kept for {@link #error()}.
 *
 * <p>Start with {@code vswitch.capture(capture)}, stop with {@code vswitch.capture(null)} then
 * {@link #close()}.
 */
public final class PcapCapture implements PacketCapture, AutoCloseable {
    private final PcapWriter writer;
    private final Set<CapturePoint> points;
    private final long epochOffsetNs;
    private long packets;
    private IOException error;

    public PcapCapture(PcapWriter writer, Set<CapturePoint> points, long epochOffsetNs) {
        this.writer = writer;
        this.points = EnumSet.copyOf(points);
        this.epochOffsetNs = epochOffsetNs;
    }

    /** A capture into a new nanosecond pcap file at {@code path}. */
    public static PcapCapture create(Path path, Set<CapturePoint> points, long epochOffsetNs) {
        try {
            return new PcapCapture(PcapWriter.create(path), points, epochOffsetNs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void onPacket(CapturePoint point, ByteBuf frame, long nowNs) {
        if (error != null || !points.contains(point)) {
            return;
        }
        try {
            writer.write(nowNs + epochOffsetNs, frame);
            packets++;
        } catch (IOException e) {
            error = e;
        }
    }

    public long packets() {
        return packets;
    }

    public IOException error() {
        return error;
    }

    @Override
    public void close() throws IOException {
        writer.close();
    }
}
