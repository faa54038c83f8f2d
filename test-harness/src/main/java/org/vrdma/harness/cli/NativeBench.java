package org.vrdma.harness.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import org.vrdma.harness.perf.NativePerftestBench;
import org.vrdma.harness.perf.TcpBaseline;

/** The perftest part of {@code ./vrdma bench}: unmodified C programs over the native library. */
final class NativeBench {
    private NativeBench() {}

    /**
     * @param javaLoopUsPerWrite the Java path's event-loop CPU per WRITE in the same run: on a shared
     *     machine the bandwidths swing with the CPU each run gets, the CPU per WRITE much less
     */
    static void print(
            PrintWriter out,
            int sizeBytes,
            long durationNs,
            double javaGbps,
            double tcpGbps,
            double javaLoopUsPerWrite) {
        out.println();
        StringBuilder why = new StringBuilder();
        Path lib = NativePerftestBench.nativeLibrary(why);
        if (lib == null) {
            out.println("perftest over the emulator: not run: " + why);
            out.flush();
            return;
        }
        // About half the duration at the Java path's measured pace: a run of a fraction of a second
        // is mostly connection setup, memory registration and JIT compilation of the ring code,
        // whose CPU then lands on few WRITEs.
        double javaWritesPerSecond = Math.max(1000.0 * 65536 / sizeBytes, javaGbps * 1e9 / 8 / sizeBytes);
        int writes = (int) Math.max(200, Math.min(200_000, durationNs / 1e9 * javaWritesPerSecond / 2));
        int latencyIterations = (int) Math.max(200, Math.min(20_000, durationNs / 1e9 * 1000));
        NativePerftestBench.Result r;
        try (NativePerftestBench bench = NativePerftestBench.start(lib)) {
            r = bench.run(sizeBytes, writes, 2, latencyIterations);
        } catch (Exception e) {
            out.println("perftest over the emulator: FAILED: " + e.getMessage());
            out.flush();
            return;
        }
        TcpBaseline.Latency tcp2 = TcpBaseline.latency(2, 2_000, durationNs, 5_000_000);
        out.println("perftest over the emulator: unmodified ib_write_bw / ib_send_lat through the native"
                + " libibverbs.so.1, 2 verbs hosts in this process (UDP on 127.0.0.1)");
        out.printf(
                "%-44s %14s %14s %14s %12s %12s%n",
                "workload", "perftest", "vRDMA (Java)", "kernel TCP", "perftest/Java", "perftest/TCP");
        out.printf(
                "%-44s %14.2f %14.2f %14.2f %12.2f %12.2f%n",
                "ib_write_bw, " + sizeBytes + " B [Gbit/s]",
                r.writeGbps(),
                javaGbps,
                tcpGbps,
                javaGbps > 0 ? r.writeGbps() / javaGbps : 0,
                tcpGbps > 0 ? r.writeGbps() / tcpGbps : 0);
        double tcpUs = tcp2.p50Ns() / 1e3;
        out.printf(
                "%-44s %14.2f %14s %14.2f %12s %12.2f%n",
                "ib_send_lat, 2 B, typical one-way [us]",
                r.sendLatTypicalUs(),
                "-",
                tcpUs,
                "-",
                tcpUs > 0 ? r.sendLatTypicalUs() / tcpUs : 0);
        out.printf("%-44s %14.2f%n", "ib_send_lat, 2 B, 99% [us]", r.sendLatP99Us());
        out.printf(
                "ib_write_bw CPU per %d B WRITE (user+system): %.1f us both hosts' event loops, %.1f us the whole"
                        + " vNIC process, %.1f us the two perftest processes; %.2f doorbells per WRITE%n",
                sizeBytes,
                r.writeCpu().loopsUs(),
                r.writeCpu().vnicProcessUs(),
                r.writeCpu().perftestUs(),
                r.writeCpu().doorbellsPerWrite());
        double loopUs = r.writeCpu().loopsUs();
        out.printf(
                "ib_write_bw event-loop CPU per WRITE against the Java path's: %.1f us against %.1f us (%.2fx)%n",
                loopUs, javaLoopUsPerWrite, javaLoopUsPerWrite > 0 ? loopUs / javaLoopUsPerWrite : 0);
        double[] u = r.writeCpu().underlay();
        out.printf(
                "ib_write_bw underlay (both hosts) per WRITE: %.1f datagrams (%.1f ACKs), %.2f GSO sends, %.2f flushes,"
                        + " %.2f read bursts, %.2f recvmmsg calls; %d packets retransmitted after %d timeouts;"
                        + " %.1f B of heap allocated by the event loops%n",
                u[0],
                r.writeCpu().acksPerWrite(),
                u[1],
                u[2],
                u[4],
                u[5],
                r.writeCpu().retransmitted(),
                r.writeCpu().timeouts(),
                r.writeCpu().loopAllocatedBytes());
        out.printf(
                "ib_write_bw registered memory: %d regions zero-copy, %d through process_vm_readv/writev"
                        + " (%d memfds refused), %d process_vm calls%n",
                r.memory().zeroCopyRegions(),
                r.memory().copyRegions(),
                r.memory().refusedMemfds(),
                r.memory().copyCalls());
        double ratio = javaGbps > 0 ? r.writeGbps() / javaGbps : 0;
        out.printf(
                "target: perftest bandwidth >= 0.80x the Java path: %.2fx %s%n",
                ratio, ratio >= 0.8 ? "met" : "NOT met");
        out.flush();
    }
}
