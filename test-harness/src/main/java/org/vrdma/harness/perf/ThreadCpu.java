package org.vrdma.harness.perf;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of this process's threads by kind, from {@code /proc/self/task/*}: what a benchmark's
 * process spent besides its event loops (the JIT compiling, the garbage collector, control
 * connections, doorbell readers). Threads that ended between two readings drop out of the later
 * one, so take readings around a run in which no thread ends (or accept that error).
 */
public final class ThreadCpu {
    /** Event loops ({@code vrdma-…} threads that are not the ones below). */
    public static final int LOOPS = 0;
    /** The JIT's compiler threads. */
    public static final int JIT = 1;
    /** The garbage collector's threads. */
    public static final int GC = 2;
    /** The vNIC's control side: its acceptor, doorbell readers, and the carriers of its connections' virtual threads. */
    public static final int CONTROL = 3;
    /** Everything else (the main thread, JVM service threads). */
    public static final int OTHER = 4;

    public static final int KINDS = 5;

    private ThreadCpu() {}

    /** Nanoseconds of user+system CPU per kind, all zero where {@code /proc} is not there. */
    public static long[] byKind() {
        long[] ns = new long[KINDS];
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    int open = stat.indexOf('(');
                    int close = stat.lastIndexOf(')');
                    String comm = stat.substring(open + 1, close);
                    String[] f = stat.substring(close + 2).split(" ");
                    // Fields after the command start at 3 (state): utime is 14, stime 15, in ticks of 10 ms.
                    long ticks = Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
                    ns[kind(comm)] += ticks * 10_000_000L;
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return ns;
    }

    /** The kind of a thread by its (15-character) name. */
    public static int kind(String comm) {
        if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
            return JIT;
        }
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread")) {
            return GC;
        }
        if (comm.startsWith("vrdma-control") || comm.startsWith("vrdma-doorbell") || comm.startsWith("ForkJoinPool")) {
            return CONTROL;
        }
        if (comm.startsWith("vrdma-")) {
            return LOOPS;
        }
        return OTHER;
    }
}
