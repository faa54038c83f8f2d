package org.vrdma.vswitch.tap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vswitch.pipeline.VSwitch;

/**
 * A TAP device backing an ENI of a real-time {@link VSwitch}: the kernel's TCP/IP stack (ping,
 * iperf3, an RDMA application's out-of-band TCP exchange) sends and receives the ENI's non-RoCE
 * traffic through it, in the same QoS classes and overlay as the ENI's RDMA traffic.
 *
 * <p>Data flow. A dedicated reader thread polls the device and reads frames (non-blocking, until
 * empty, up to 64 per wake-up) into pooled direct buffers with the switch's encapsulation headroom
 * in front, so the switch encapsulates them in place; it hands them to the switch's event loop
 * through a bounded queue drained by one reusable task (no allocation per frame beyond the pooled
 * buffer). The switch delivers the ENI's TCP/IP frames to this port ({@link FrameSink}) on its
 * loop, which writes each to the device and releases it.
 *
 * <p>Ownership: a buffer read from the device belongs to the reader until it is queued, then to the
 * loop's drain task, which gives it to {@link VSwitch#onEniFrame}; {@link #onFrame} takes the frame
 * and releases it after the write. Frames that find the queue full or the port closed are released
 * and counted.
 */
public final class TapPort implements FrameSink, AutoCloseable {
    static final int HANDOFF_FRAMES = 1024;
    static final int READS_PER_WAKEUP = 64;
    static final int DRAIN_PER_TASK = 256;
    static final int POLL_TIMEOUT_MS = 100;
    private static final int SCRATCH_BYTES = 65_536;
    /** Ethernet header plus a VLAN tag: what a frame may add to the MTU. */
    private static final int LINK_OVERHEAD_BYTES = 18;

    private final TapDevice device;
    private final TapConfig config;
    private final EventLoop loop;
    private final VSwitch vswitch;
    private final int eniId;
    private final ByteBufAllocator allocator;
    private final int headroomBytes;
    private final int frameCapacityBytes;
    private final ArrayBlockingQueue<ByteBuf> handoff = new ArrayBlockingQueue<>(HANDOFF_FRAMES);
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drain;
    private final Thread reader;
    private final TapDevice.Errno writeErrno = new TapDevice.Errno();
    private final Arena writeArena = Arena.ofShared();
    private final MemorySegment writeScratch = writeArena.allocate(SCRATCH_BYTES);
    private final ByteBuffer writeScratchView = writeScratch.asByteBuffer();
    private volatile boolean running = true;

    private volatile long rxFrames;
    private volatile long rxBytes;
    private volatile long rxDropped;
    private volatile long readErrors;
    private volatile long txFrames;
    private volatile long txBytes;
    private volatile long txErrors;

    private TapPort(
            TapDevice device,
            TapConfig config,
            EventLoop loop,
            VSwitch vswitch,
            int eniId,
            ByteBufAllocator allocator) {
        this.device = device;
        this.config = config;
        this.loop = loop;
        this.vswitch = vswitch;
        this.eniId = eniId;
        this.allocator = allocator;
        this.headroomBytes = vswitch.encapsulationHeadroomBytes();
        this.frameCapacityBytes = config.mtu() + LINK_OVERHEAD_BYTES;
        this.reader =
                Thread.ofPlatform().daemon().name("vrdma-tap-" + config.name()).unstarted(this::readLoop);
    }

    /**
     * Opens the TAP device, configures it with iproute2 (see {@link TapConfig#commands()}), starts
     * its reader and makes it the ENI's TCP/IP sink on the switch's loop.
     *
     * @param loop the switch's event loop; the switch is touched only there
     * @throws IOException when the device cannot be created or configured (it is removed again)
     */
    public static TapPort open(TapConfig config, EventLoop loop, VSwitch vswitch, int eniId, ByteBufAllocator allocator)
            throws IOException {
        TapDevice device = TapDevice.open(config.name());
        try {
            for (List<String> command : config.commands()) {
                boolean optional = command.contains("sysctl"); // IPv6 may be off already, or absent
                run(command, optional);
            }
        } catch (IOException | RuntimeException e) {
            device.close();
            throw e;
        }
        TapPort port = new TapPort(device, config, loop, vswitch, eniId, allocator);
        try {
            loop.submit(() -> vswitch.setIpSink(eniId, port)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            port.close();
            throw new IOException("interrupted while attaching TAP " + config.name(), e);
        } catch (ExecutionException | TimeoutException e) {
            port.close();
            throw new IOException("could not attach TAP " + config.name() + " to ENI " + eniId, e);
        }
        port.reader.start();
        return port;
    }

    private static void run(List<String> command, boolean optional) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + ": no answer in 10 s");
            }
            if (p.exitValue() != 0 && !optional) {
                throw new IOException(String.join(" ", command) + " failed (" + p.exitValue() + "): "
                        + new String(out, StandardCharsets.UTF_8).strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
    }

    public TapConfig config() {
        return config;
    }

    public String name() {
        return device.name();
    }

    // ---------------------------------------------------------------- device -> switch

    private void readLoop() {
        try (TapDevice.Errno errno = new TapDevice.Errno();
                Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(SCRATCH_BYTES);
            ByteBuffer scratchView = scratch.asByteBuffer();
            while (running) {
                if (!device.pollReadable(errno, POLL_TIMEOUT_MS)) {
                    continue;
                }
                for (int i = 0; i < READS_PER_WAKEUP && running; i++) {
                    if (!readOne(errno, scratch.address(), scratchView)) {
                        break;
                    }
                }
            }
        }
    }

    /** Reads one frame and queues it for the switch; false when the device is empty (or failed). */
    private boolean readOne(TapDevice.Errno errno, long scratchAddress, ByteBuffer scratchView) {
        ByteBuf buf = allocator.directBuffer(headroomBytes + frameCapacityBytes);
        long n;
        if (buf.hasMemoryAddress()) {
            n = device.read(errno, buf.memoryAddress() + headroomBytes, frameCapacityBytes);
        } else {
            // Without Unsafe a direct ByteBuf's address is not exposed: read into native scratch, copy.
            n = device.read(errno, scratchAddress, frameCapacityBytes);
            if (n > 0) {
                scratchView.clear().limit((int) n);
                buf.setBytes(headroomBytes, scratchView);
            }
        }
        if (n <= 0) {
            buf.release();
            if (n < 0 && errno.value() != TapDevice.EAGAIN) {
                readErrors++;
            }
            return false;
        }
        buf.setIndex(headroomBytes, headroomBytes + (int) n);
        if (!handoff.offer(buf)) {
            buf.release();
            rxDropped++;
            return true;
        }
        rxFrames++;
        rxBytes += n;
        if (!drainScheduled.getAndSet(true)) {
            loop.execute(drainTask);
        }
        return true;
    }

    /** On the switch's loop: feeds queued frames to the switch, a bounded number per task. */
    private void drain() {
        drainScheduled.set(false);
        for (int i = 0; i < DRAIN_PER_TASK; i++) {
            ByteBuf frame = handoff.poll();
            if (frame == null) {
                return;
            }
            if (!running) {
                frame.release();
                continue;
            }
            vswitch.onEniFrame(eniId, frame);
        }
        if (!handoff.isEmpty() && !drainScheduled.getAndSet(true)) {
            loop.execute(drainTask);
        }
    }

    // ---------------------------------------------------------------- switch -> device

    /** A frame the switch delivers to the ENI's TCP/IP side: written to the device, then released. */
    @Override
    public void onFrame(ByteBuf frame, long nowNs) {
        int len = frame.readableBytes();
        long n = -1;
        if (running) {
            if (frame.hasMemoryAddress()) {
                n = device.write(writeErrno, frame.memoryAddress() + frame.readerIndex(), len);
            } else if (len <= SCRATCH_BYTES) {
                writeScratchView.clear().limit(len);
                frame.getBytes(frame.readerIndex(), writeScratchView);
                n = device.write(writeErrno, writeScratch.address(), len);
            }
        }
        frame.release();
        if (n == len) {
            txFrames++;
            txBytes += len;
        } else {
            txErrors++;
        }
    }

    // ---------------------------------------------------------------- counters and close

    /** Frames read from the device and handed to the switch. */
    public long rxFrames() {
        return rxFrames;
    }

    public long rxBytes() {
        return rxBytes;
    }

    /** Frames read but dropped because the switch's loop was behind (queue full). */
    public long rxDropped() {
        return rxDropped;
    }

    public long readErrors() {
        return readErrors;
    }

    /** Frames written to the device. */
    public long txFrames() {
        return txFrames;
    }

    public long txBytes() {
        return txBytes;
    }

    /** Frames the device refused, or that arrived after close. */
    public long txErrors() {
        return txErrors;
    }

    /**
     * Stops the reader, detaches from the ENI and closes the device (the kernel removes the
     * interface). Call from any thread but the switch's loop.
     */
    @Override
    public void close() {
        running = false;
        try {
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!loop.isShuttingDown()) {
            try {
                loop.submit(() -> {
                            if (vswitch.eni(eniId) != null) {
                                vswitch.setIpSink(eniId, null);
                            }
                            ByteBuf b;
                            while ((b = handoff.poll()) != null) {
                                b.release();
                            }
                        })
                        .get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // the loop is gone: nothing more reaches this port
            }
        }
        ByteBuf b;
        while ((b = handoff.poll()) != null) {
            b.release();
        }
        device.close();
    }
}
