package org.vrdma.harness.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.vrdma.harness.perf.TcpBaseline;
import org.vrdma.harness.perf.VerbsApiBench;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.vnic.transport.TransportConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The Java verbs API against kernel TCP in one run: RDMA WRITE bandwidth and SEND latency written
 * as a JVM application writes them (application threads, posting, polling, completion channels),
 * then the same two workloads over a TCP socket pair on 127.0.0.1, and the ratios.
 */
@Command(
        name = "verbs-bench",
        description = "Benchmark the Java verbs API (WRITE bandwidth, SEND latency) against kernel TCP on 127.0.0.1.")
final class VerbsBenchCommand implements Callable<Integer> {
    private static final long MAX_LATENCY_ITERATIONS = 5_000_000;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--duration",
            defaultValue = "5",
            description = "Seconds per workload (after a warm-up of half that); default ${DEFAULT-VALUE}.")
    double durationSeconds;

    @Option(
            names = "--size",
            defaultValue = "65536",
            description = "Bytes per WRITE and per TCP write; default ${DEFAULT-VALUE}.")
    int sizeBytes;

    @Option(
            names = "--latency-size",
            defaultValue = "64",
            description = "Bytes per ping-pong message; default ${DEFAULT-VALUE}.")
    int latencySizeBytes;

    @Option(names = "--tx-depth", defaultValue = "64", description = "WRITEs outstanding; default ${DEFAULT-VALUE}.")
    int txDepth;

    @Option(
            names = "--attach",
            split = ",",
            description = "Two control sockets of ./vrdma host --verbs-socket processes routed to each other:"
                    + " the API attaches to them instead of starting two hosts in this JVM.")
    List<Path> attach;

    @Override
    public Integer call() throws Exception {
        if (!(durationSeconds > 0 && durationSeconds <= 600)
                || sizeBytes < 1
                || sizeBytes > (1 << 20)
                || latencySizeBytes < 1
                || latencySizeBytes > 4096
                || txDepth < 1
                || txDepth > 1024
                || attach != null && attach.size() != 2) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--duration in (0, 600], --size in [1, 1048576], --latency-size in [1, 4096], --tx-depth in [1, 1024],"
                            + " --attach A,B");
        }
        PrintWriter out = spec.commandLine().getOut();
        long durationNs = (long) (durationSeconds * 1e9);
        // The real-time profile of ./vrdma bench: 1 ms RTO floor.
        TransportConfig transport = TransportConfig.defaults().withRto(1_000_000, 2_000_000);
        VerbsApiBench.Bandwidth bw;
        Histogram lat;
        try (VerbsApiBench bench = attach == null
                ? new VerbsApiBench(transport, txDepth)
                : new VerbsApiBench(
                        IbvDeviceList.attach(attach.get(0)), IbvDeviceList.attach(attach.get(1)), txDepth)) {
            out.println("vrdma verbs-bench: " + bench.describe());
            out.flush();
            bench.writeBandwidth(sizeBytes, txDepth, durationNs / 2);
            bw = bench.writeBandwidth(sizeBytes, txDepth, durationNs);
            lat = bench.sendLatency(latencySizeBytes, 1000, durationNs, MAX_LATENCY_ITERATIONS);
        }
        TcpBaseline.bandwidth(sizeBytes, durationNs / 2);
        TcpBaseline.Bandwidth tcpBw = TcpBaseline.bandwidth(sizeBytes, durationNs);
        TcpBaseline.Latency tcpLat = TcpBaseline.latency(latencySizeBytes, 1000, durationNs, MAX_LATENCY_ITERATIONS);
        out.printf(
                "%nmachine: %d cores; %s %s%n%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.vm.version"));
        out.printf("%-52s %12s %12s %10s%n", "workload", "Java API", "kernel TCP", "API/TCP");
        out.printf(
                "%-52s %12.2f %12.2f %10.2f%n",
                "bandwidth, 1 QP / 1 stream, " + sizeBytes + " B [Gbit/s]",
                bw.gbps(),
                tcpBw.gbps(),
                bw.gbps() / tcpBw.gbps());
        row(
                out,
                "latency p50, " + latencySizeBytes + " B, half RTT [us]",
                lat.getValueAtPercentile(50),
                tcpLat.p50Ns());
        row(out, "latency p99 [us]", lat.getValueAtPercentile(99), tcpLat.p99Ns());
        row(out, "latency p99.9 [us]", lat.getValueAtPercentile(99.9), tcpLat.p999Ns());
        out.printf(
                "%nruns: API %d WRITEs, %d round trips; TCP %d MB streamed, %d round trips%n",
                bw.writes(), lat.getTotalCount(), tcpBw.bytes() >> 20, tcpLat.iterations());
        out.flush();
        return 0;
    }

    private static void row(PrintWriter out, String name, long apiNs, long tcpNs) {
        out.printf("%-52s %12.2f %12.2f %10.2f%n", name, apiNs / 1e3, tcpNs / 1e3, (double) apiNs / tcpNs);
    }
}
