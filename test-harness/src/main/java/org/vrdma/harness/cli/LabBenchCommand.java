package org.vrdma.harness.cli;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.ThreadMXBean;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.io.PrintWriter;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.ReadyLabs;
import org.vrdma.harness.lab.RunProgress;
import org.vrdma.runtime.LinkConfig;
import org.vrdma.runtime.LinkModel;
import org.vrdma.runtime.VirtualTimeScheduler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Benchmark of the virtual-time backend: the HPCC paper's 320-host fat tree at WebSearch load
 * with DCQCN for a span of lab time, on this thread (one core). Reports link transmissions (every
 * packet on every link, ACKs and CNPs included) per wall-clock second, wall time, peak heap,
 * direct memory and peak resident set, and bytes allocated per link transmission; in the same run, the same
 * measure for bare frames through one {@code LinkModel} (the runtime's cheapest link
 * transmission) as the baseline, with the ratio.
 */
@Command(
        name = "bench",
        description =
                "Benchmark the virtual-time backend on the 320-host fat tree (link transmissions per second, memory, allocation).")
final class LabBenchCommand implements Callable<Integer> {
    static final double TARGET_PER_SECOND = 1.9e6;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--duration-us",
            defaultValue = "10000",
            description = "Lab time to run (default ${DEFAULT-VALUE} us = 10 ms).")
    long durationUs;

    @Option(names = "--cc", defaultValue = "dcqcn", description = "Congestion control (default ${DEFAULT-VALUE}).")
    String cc;

    @Option(names = "--load", defaultValue = "0.3", description = "WebSearch load (default ${DEFAULT-VALUE}).")
    double load;

    @Option(names = "--seed", defaultValue = "1", description = "Seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--payload",
            defaultValue = "length",
            description =
                    "Packets carry their payload's bytes (bytes) or only its length (length, default: no copies, no ICRC; same results).")
    String payload;

    @Option(
            names = "--warmup-us",
            defaultValue = "1000",
            description = "Lab time of a warm-up run first (default ${DEFAULT-VALUE}; 0: none).")
    long warmupUs;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        out.printf(
                "vrdma lab bench: virtual time, HPCC fat tree (320 hosts, 100G hosts, 400G fabric), WebSearch %.0f%%, %s, seed %d, payload %s%n",
                load * 100, cc, seed, payload);
        out.printf(
                Locale.ROOT,
                "machine: %d cores; %s %s; GC %s, heap on %s; one thread; load average %s%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.vm.version"),
                ManagementFactory.getGarbageCollectorMXBeans().getFirst().getName(),
                heapPages(),
                loadAverage());
        out.flush();
        double baseline = baselinePerSecond(threads, out);
        if (warmupUs > 0) {
            try (LabRun run = LabBackends.get("virtual")
                    .start(withPayload(ReadyLabs.hpccFatTree(cc, load, warmupUs, 0, seed + 1)))) {
                run.run(RunProgress.NONE);
            }
        }
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            p.resetPeakUsage();
        }
        Lab lab = withPayload(ReadyLabs.hpccFatTree(cc, load, durationUs, 0, seed));
        long tid = Thread.currentThread().threadId();
        long build0 = System.nanoTime();
        long alloc0 = threads.getThreadAllocatedBytes(tid);
        LabResults r;
        long buildNs;
        long runNs;
        long cpuNs;
        long allocRun;
        long directBytes;
        try (LabRun run = LabBackends.get("virtual").start(lab)) {
            buildNs = System.nanoTime() - build0;
            long alloc1 = threads.getThreadAllocatedBytes(tid);
            long cpu0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            r = run.run(RunProgress.NONE);
            runNs = System.nanoTime() - t0;
            cpuNs = threads.getCurrentThreadCpuTime() - cpu0;
            allocRun = threads.getThreadAllocatedBytes(tid) - alloc1;
            directBytes = directBytes();
        }
        long heapPeak = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP && p.getPeakUsage() != null) {
                heapPeak += p.getPeakUsage().getUsed();
            }
        }
        LabResults.Counters c = r.counters();
        double perSecond = c.linkTransmissions() / (runNs / 1e9);
        out.printf(
                Locale.ROOT,
                "lab: %.1f ms of lab time, %d flows started, %d finished, %d link transmissions, %d vNIC packets, %d CNPs, %d ECN marks, %d drops%n",
                r.endNs() / 1e6,
                c.flowsStarted(),
                c.flowsFinished(),
                c.linkTransmissions(),
                c.txPackets(),
                c.cnpsSent(),
                c.ecnMarks(),
                c.bufferDrops());
        out.printf(
                Locale.ROOT,
                "wall: build %.2f s, run %.2f s (%.0fx slower than real time); load average now %s%n",
                buildNs / 1e9,
                runNs / 1e9,
                runNs / (durationUs * 1e3),
                loadAverage());
        out.printf(
                Locale.ROOT,
                "link transmissions per wall-clock second: %.3f M (target %.1f M: %s)%n",
                perSecond / 1e6,
                TARGET_PER_SECOND / 1e6,
                perSecond >= TARGET_PER_SECOND ? "met" : "NOT met");
        out.printf(
                Locale.ROOT,
                "per CPU-second of the lab thread (less sensitive to other load; GC runs on other threads): %.3f M (thread CPU %.2f s)%n",
                c.linkTransmissions() / (cpuNs / 1e9) / 1e6,
                cpuNs / 1e9);
        out.printf(
                Locale.ROOT,
                "baseline, bare LinkModel frames: %.3f M/s; fat tree / baseline = %.3f%n",
                baseline / 1e6,
                perSecond / baseline);
        out.printf(
                Locale.ROOT,
                "memory: peak heap %.0f MiB, direct buffers %.0f MiB at the end of the run, peak resident set %s (max heap %.0f MiB)%n",
                heapPeak / 1048576.0,
                directBytes / 1048576.0,
                peakResident(),
                Runtime.getRuntime().maxMemory() / 1048576.0);
        out.printf(
                Locale.ROOT,
                "allocation during the run: %.1f MB, %.1f bytes per link transmission, %.0f bytes per flow started%n",
                allocRun / 1e6,
                (double) allocRun / Math.max(1, c.linkTransmissions()),
                (double) allocRun / Math.max(1, c.flowsStarted()));
        out.flush();
        return 0;
    }

    private Lab withPayload(Lab lab) {
        return lab.withTransport(lab.transport().withPayload(payload));
    }

    /** Netty's pooled direct memory plus the JVM's direct buffers (the lab's frames). */
    private static long directBytes() {
        long bytes = PlatformDependent.usedDirectMemory();
        for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (p.getName().equals("direct")) {
                bytes += p.getMemoryUsed();
            }
        }
        return bytes;
    }

    /** The process's peak resident set size (VmHWM), or "unknown". */
    private static String peakResident() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    long kb = Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
                    return String.format(Locale.ROOT, "%.0f MiB", kb / 1024.0);
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // Not Linux: no figure.
        }
        return "unknown";
    }

    /** Whether the heap asked for transparent huge pages (the launcher does for labs): the rate depends on it. */
    private static String heapPages() {
        try {
            boolean huge = Boolean.parseBoolean(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .getVMOption("UseTransparentHugePages")
                    .getValue());
            return huge ? "transparent huge pages" : "small pages";
        } catch (RuntimeException e) {
            return "pages of unknown size";
        }
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .split(" ")[0];
        } catch (java.io.IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** Frames through one modelled 100 Gbit/s link, one pooled buffer reused: the floor of a link transmission. */
    private static double baselinePerSecond(ThreadMXBean threads, PrintWriter out) {
        VirtualTimeScheduler s = new VirtualTimeScheduler(1);
        long[] delivered = new long[1];
        ByteBuf frame = PooledByteBufAllocator.DEFAULT.directBuffer(4200).writeZero(4200);
        LinkModel[] link = new LinkModel[1];
        link[0] = new LinkModel(s, LinkConfig.of(100_000_000_000L, 1000), s.random("bench"), (f, now) -> {
            delivered[0]++;
            link[0].send(f);
        });
        int n = 4_000_000;
        for (int warm = 0; warm < 2; warm++) {
            delivered[0] = 0;
            link[0].send(frame.retain());
            s.runUntilIdle(n / 4);
        }
        delivered[0] = 0;
        long alloc0 = threads.getThreadAllocatedBytes(Thread.currentThread().threadId());
        long t0 = System.nanoTime();
        s.runUntilIdle(n);
        long ns = System.nanoTime() - t0;
        long alloc = threads.getThreadAllocatedBytes(Thread.currentThread().threadId()) - alloc0;
        link[0].close();
        frame.release();
        double perSecond = delivered[0] / (ns / 1e9);
        out.printf(
                Locale.ROOT,
                "baseline: %d frames over one LinkModel in %.2f s, %.1f bytes allocated per frame%n",
                delivered[0],
                ns / 1e9,
                (double) alloc / Math.max(1, delivered[0]));
        return perSecond;
    }
}
