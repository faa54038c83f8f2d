package org.vrdma.harness.cli;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.runtime.LinkModel;
import org.vrdma.runtime.VirtualTimeScheduler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Pushes frames through one modelled link in virtual time and reports what arrived: a quick check
 * of the link model's rate, delay, queue and loss settings, reproducible from its seed.
 */
@Command(name = "link", description = "Send frames over a modelled lossy link in virtual time and report delivery.")
final class LinkCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--rate",
            defaultValue = "100G",
            description = "Link rate, e.g. 100G, 25G, 400M (default ${DEFAULT-VALUE}).")
    String rate;

    @Option(
            names = "--delay-ns",
            defaultValue = "5000",
            description = "One-way propagation delay in ns (default ${DEFAULT-VALUE}).")
    long delayNs;

    @Option(
            names = "--queue-bytes",
            defaultValue = "1048576",
            description = "Transmit queue in bytes (default ${DEFAULT-VALUE}).")
    long queueBytes;

    @Option(
            names = "--loss",
            defaultValue = "0",
            description = "Random loss probability in [0,1] (default ${DEFAULT-VALUE}).")
    double loss;

    @Option(names = "--frames", defaultValue = "100000", description = "Frames to send (default ${DEFAULT-VALUE}).")
    int frames;

    @Option(
            names = "--frame-bytes",
            defaultValue = "4096",
            description = "Frame size in bytes (default ${DEFAULT-VALUE}).")
    int frameBytes;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the run (default ${DEFAULT-VALUE}).")
    long seed;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        long rateBps = Units.parseRateBps(rate);
        if (frames <= 0 || frameBytes <= 0 || frameBytes > 65_536) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--frames must be positive and --frame-bytes in 1..65536");
        }
        LinkConfig config = new LinkConfig(rateBps, delayNs, queueBytes, loss);
        VirtualTimeScheduler scheduler = new VirtualTimeScheduler(seed);
        long[] lastArrivalNs = {0};
        LinkModel link = new LinkModel(scheduler, config, scheduler.random("link"), (frame, nowNs) -> {
            lastArrivalNs[0] = nowNs;
            frame.release();
        });
        // Offer frames at line rate: one every serialisation time, so the queue stays short.
        long intervalPs = link.serialisationPs(frameBytes);
        long sent = 0;
        for (int i = 0; i < frames; i++) {
            scheduler.runUntil(i * intervalPs / 1000);
            ByteBuf frame = PooledByteBufAllocator.DEFAULT.buffer(frameBytes);
            frame.writerIndex(frameBytes);
            if (link.send(frame)) {
                sent++;
            }
        }
        scheduler.runUntilIdle(10L * frames + 10);
        double seconds = lastArrivalNs[0] / 1e9;
        out.printf(
                "link            %s, %d ns one-way, %d-byte queue, loss %.4f, seed %d%n",
                rate, delayNs, queueBytes, loss, seed);
        out.printf("frames offered  %d x %d bytes%n", frames, frameBytes);
        out.printf("accepted        %d (tail-dropped %d)%n", sent, link.framesTailDropped());
        out.printf(
                "delivered       %d (lost on the wire %d, %.4f%%)%n",
                link.framesDelivered(), link.framesLost(), 100.0 * link.framesLost() / Math.max(1, sent));
        out.printf("virtual time    %.3f ms%n", seconds * 1e3);
        out.printf("goodput         %.2f Gbit/s%n", seconds == 0 ? 0 : link.bytesDelivered() * 8 / seconds / 1e9);
        out.printf("events          %d%n", scheduler.eventsFired());
        return 0;
    }
}
