package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Posts a sequence of RC operations from host A to host B over a {@link Fabric} and checks every
 * invariant of reliable delivery: data byte-exact, exactly once (receives and atomics), completions
 * in order with the right status, opcode, byte_len, imm_data and wr_id.
 *
 * <p>Memory layout (same on both hosts, offsets from {@link Fabric#BASE}): [0, 3 MiB) A's sources
 * and B's SEND/WRITE targets; [3, 6 MiB) B's READ sources and A's READ targets; the last 64 KiB hold
 * atomic counters (B) and atomic results (A).
 */
final class Workload {
    enum Kind {
        SEND,
        SEND_IMM,
        SEND_INLINE,
        WRITE,
        WRITE_IMM,
        READ,
        FETCH_ADD,
        CMP_SWAP
    }

    record Op(Kind kind, int length) {}

    static final long READ_AREA = 3L << 20;
    static final long ATOMIC_AREA = Fabric.MEMORY_BYTES - 65536;
    static final int COUNTERS = 4;

    private final Fabric f;
    private final QueuePair qa;
    private final int sqDepth;

    Workload(final Fabric f, final QueuePair qa, final int sqDepth) {
        this.f = f;
        this.qa = qa;
        this.sqDepth = sqDepth;
    }

    /** Random operations of {@code kinds}, lengths up to {@code maxLength}, fitting the layout. */
    static List<Op> random(final SplittableRandom rnd, final int count, final Kind[] kinds, final int maxLength) {
        final List<Op> ops = new ArrayList<>();
        long used = 0;
        for (int i = 0; i < count; i++) {
            final Kind k = kinds[rnd.nextInt(kinds.length)];
            int len = switch (k) {
                case SEND_INLINE -> rnd.nextInt(65);
                case FETCH_ADD, CMP_SWAP -> 8;
                default -> rnd.nextInt(4) == 0 ? rnd.nextInt(3) : rnd.nextInt(maxLength + 1);
            };
            if (used + len + 64 > READ_AREA) {
                break;
            }
            used += (len + 63) & ~63;
            ops.add(new Op(k, len));
        }
        return ops;
    }

    /** Runs {@code ops} and asserts every invariant; returns virtual nanoseconds it took. */
    long run(final List<Op> ops, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        fill(f.a, 0, READ_AREA, rnd);
        fill(f.b, READ_AREA, READ_AREA, rnd);
        zero(f.b, 0, READ_AREA);
        zero(f.a, READ_AREA, READ_AREA);
        zero(f.a, ATOMIC_AREA, 65536);
        zero(f.b, ATOMIC_AREA, 65536);

        final long[] offsets = new long[ops.size()];
        final long[] expectedOriginal = new long[ops.size()];
        final long[] counters = new long[COUNTERS];
        final long[] cas = new long[ops.size()];
        long cursor = 0;
        for (int i = 0; i < ops.size(); i++) {
            offsets[i] = cursor;
            cursor += (ops.get(i).length() + 63) & ~63;
            final Op op = ops.get(i);
            final int c = i % COUNTERS;
            if (op.kind() == Kind.FETCH_ADD) {
                expectedOriginal[i] = counters[c];
                counters[c] += i + 1;
            } else if (op.kind() == Kind.CMP_SWAP) {
                expectedOriginal[i] = counters[c];
                cas[i] = rnd.nextLong();
                counters[c] = cas[i];
            }
        }

        // Receives for everything that consumes one, in message order, plus one spare that must stay unused.
        final List<Integer> recvOps = new ArrayList<>();
        final QueuePair qb = f.b.device.queuePair(qaPeer());
        final RecvWorkRequest rwr = new RecvWorkRequest();
        for (int i = 0; i < ops.size(); i++) {
            final Kind k = ops.get(i).kind();
            if (k == Kind.SEND || k == Kind.SEND_IMM || k == Kind.SEND_INLINE || k == Kind.WRITE_IMM) {
                recvOps.add(i);
            }
        }

        final long start = f.scheduler.nowNs();
        final SendWorkRequest wr = new SendWorkRequest();
        final WorkCompletion[] wcs = new WorkCompletion[64];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        int posted = 0;
        int completed = 0;
        int recvPosted = 0;
        int recvCompleted = 0;
        final long deadline = start + 2_000_000_000L;
        while (completed < ops.size() || recvCompleted < recvOps.size()) {
            // Keep receives ahead of the sends that need them.
            while (recvPosted < recvOps.size() && recvPosted - recvCompleted < 256) {
                final int i = recvOps.get(recvPosted);
                rwr.reset();
                rwr.wrId = 1_000_000 + i;
                if (ops.get(i).kind() != Kind.WRITE_IMM) {
                    rwr.addSge(Fabric.BASE + offsets[i], Math.max(ops.get(i).length(), 0), f.b.mr.lkey());
                }
                qb.postRecv(rwr);
                recvPosted++;
            }
            while (posted < ops.size() && posted - completed < sqDepth) {
                post(wr, ops.get(posted), posted, offsets[posted], expectedOriginal[posted], cas[posted]);
                posted++;
            }
            final int doneBefore = completed + recvCompleted;
            f.scheduler.runUntil(() -> f.a.cq.size() > 0 || f.b.cq.size() > 0, deadline);
            int n;
            while ((n = f.a.cq.poll(wcs)) > 0) {
                for (int j = 0; j < n; j++) {
                    final WorkCompletion wc = wcs[j];
                    assertThat(wc.status).as("send completion %s", wc).isEqualTo(WcStatus.SUCCESS);
                    assertThat(wc.wrId).as("send completions in order").isEqualTo(completed);
                    final Op op = ops.get(completed);
                    assertThat(wc.opcode).isEqualTo(expectedOpcode(op.kind()));
                    assertThat(wc.byteLen).isEqualTo(op.length());
                    assertThat(wc.qpNum).isEqualTo(qa.qpNum());
                    completed++;
                }
            }
            while ((n = f.b.cq.poll(wcs)) > 0) {
                for (int j = 0; j < n; j++) {
                    final WorkCompletion wc = wcs[j];
                    assertThat(recvCompleted).as("no extra receive consumed").isLessThan(recvOps.size());
                    final int i = recvOps.get(recvCompleted);
                    final Op op = ops.get(i);
                    assertThat(wc.status).as("recv completion %s", wc).isEqualTo(WcStatus.SUCCESS);
                    assertThat(wc.wrId).as("recv completions in order").isEqualTo(1_000_000 + i);
                    assertThat(wc.byteLen).isEqualTo(op.length());
                    final boolean imm = op.kind() == Kind.SEND_IMM || op.kind() == Kind.WRITE_IMM;
                    assertThat(wc.wcFlags & WcFlags.WITH_IMM).isEqualTo(imm ? WcFlags.WITH_IMM : 0);
                    if (imm) {
                        assertThat(wc.immData).isEqualTo(0x5EED0000 + i);
                    }
                    assertThat(wc.opcode)
                            .isEqualTo(op.kind() == Kind.WRITE_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV);
                    recvCompleted++;
                }
            }
            assertThat(completed + recvCompleted > doneBefore || f.scheduler.nowNs() < deadline)
                    .as("progress before the deadline (QP A %s, B %s)", qa.state(), qb.state())
                    .isTrue();
        }
        final long elapsed = f.scheduler.nowNs() - start;
        f.settle();
        assertThat(f.a.cq.size()).as("no late send completions").isZero();
        assertThat(f.b.cq.size()).as("no duplicate receives").isZero();

        // Data: every target byte equals its source, and nothing outside the targets was written.
        final byte[] memA = snapshot(f.a);
        final byte[] memB = snapshot(f.b);
        for (int i = 0; i < ops.size(); i++) {
            final Op op = ops.get(i);
            final int len = op.length();
            switch (op.kind()) {
                case SEND, SEND_IMM, SEND_INLINE, WRITE, WRITE_IMM ->
                    assertSame(memA, offsets[i], memB, offsets[i], len, i);
                case READ -> assertSame(memB, READ_AREA + offsets[i], memA, READ_AREA + offsets[i], len, i);
                case FETCH_ADD, CMP_SWAP ->
                    assertThat(f.a.memory.readLong(ATOMIC_AREA + 8L * i))
                            .as("atomic %d original", i)
                            .isEqualTo(expectedOriginal[i]);
            }
        }
        for (int c = 0; c < COUNTERS; c++) {
            assertThat(f.b.memory.readLong(ATOMIC_AREA + 8L * c))
                    .as("counter %d", c)
                    .isEqualTo(counters[c]);
        }
        assertGapsUntouched(ops, offsets, memA, memB);
        return elapsed;
    }

    private int qaPeer() {
        return qa.query().destQpNum;
    }

    private void post(
            final SendWorkRequest wr,
            final Op op,
            final int i,
            final long off,
            final long expectedOriginal,
            final long swap) {
        wr.reset();
        wr.wrId = i;
        wr.sendFlags = SendFlags.SIGNALED;
        final int len = op.length();
        final int rkey = f.b.mr.rkey();
        final int lkey = f.a.mr.lkey();
        switch (op.kind()) {
            case SEND -> {
                wr.opcode = WrOpcode.SEND;
                wr.addSge(Fabric.BASE + off, len, lkey);
            }
            case SEND_IMM -> {
                wr.opcode = WrOpcode.SEND_WITH_IMM;
                wr.immData = 0x5EED0000 + i;
                wr.addSge(Fabric.BASE + off, len, lkey);
            }
            case SEND_INLINE -> {
                wr.opcode = WrOpcode.SEND;
                wr.sendFlags |= SendFlags.INLINE;
                final ByteBuf data = Unpooled.buffer(len);
                f.a.memory.read(off, data, len);
                wr.inlineData = data;
                try {
                    qa.postSend(wr);
                } finally {
                    data.release();
                }
                return;
            }
            case WRITE -> {
                wr.opcode = WrOpcode.RDMA_WRITE;
                wr.remoteAddr = Fabric.BASE + off;
                wr.rkey = rkey;
                splitSges(wr, Fabric.BASE + off, len, lkey);
            }
            case WRITE_IMM -> {
                wr.opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
                wr.immData = 0x5EED0000 + i;
                wr.remoteAddr = Fabric.BASE + off;
                wr.rkey = rkey;
                wr.addSge(Fabric.BASE + off, len, lkey);
            }
            case READ -> {
                wr.opcode = WrOpcode.RDMA_READ;
                wr.remoteAddr = Fabric.BASE + READ_AREA + off;
                wr.rkey = rkey;
                splitSges(wr, Fabric.BASE + READ_AREA + off, len, lkey);
            }
            case FETCH_ADD -> {
                wr.opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
                wr.remoteAddr = Fabric.BASE + ATOMIC_AREA + 8L * (i % COUNTERS);
                wr.rkey = rkey;
                wr.compareAdd = i + 1;
                wr.addSge(Fabric.BASE + ATOMIC_AREA + 8L * i, 8, lkey);
            }
            case CMP_SWAP -> {
                wr.opcode = WrOpcode.ATOMIC_CMP_AND_SWP;
                wr.remoteAddr = Fabric.BASE + ATOMIC_AREA + 8L * (i % COUNTERS);
                wr.rkey = rkey;
                wr.compareAdd = expectedOriginal;
                wr.swap = swap;
                wr.addSge(Fabric.BASE + ATOMIC_AREA + 8L * i, 8, lkey);
            }
        }
        qa.postSend(wr);
    }

    /** Up to three scatter/gather elements over one contiguous range, to exercise SGE walking. */
    private static void splitSges(final SendWorkRequest wr, final long addr, final int len, final int lkey) {
        if (len < 3) {
            wr.addSge(addr, len, lkey);
            return;
        }
        final int a = len / 3;
        final int b = len / 2;
        wr.addSge(addr, a, lkey);
        wr.addSge(addr + a, b - a, lkey);
        wr.addSge(addr + b, len - b, lkey);
    }

    private static WcOpcode expectedOpcode(final Kind k) {
        return switch (k) {
            case SEND, SEND_IMM, SEND_INLINE -> WcOpcode.SEND;
            case WRITE, WRITE_IMM -> WcOpcode.RDMA_WRITE;
            case READ -> WcOpcode.RDMA_READ;
            case FETCH_ADD -> WcOpcode.FETCH_ADD;
            case CMP_SWAP -> WcOpcode.COMP_SWAP;
        };
    }

    private static byte[] snapshot(final Fabric.Host h) {
        final byte[] m = new byte[Fabric.MEMORY_BYTES];
        h.memory.buffer().getBytes(0, m);
        return m;
    }

    private static void assertGapsUntouched(
            final List<Op> ops, final long[] offsets, final byte[] memA, final byte[] memB) {
        long end = 0;
        for (int i = 0; i < ops.size(); i++) {
            final Op op = ops.get(i);
            if (op.kind() != Kind.FETCH_ADD && op.kind() != Kind.CMP_SWAP) {
                end = Math.max(end, offsets[i] + ((op.length() + 63) & ~63));
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            final Op op = ops.get(i);
            final long gapStart = offsets[i] + op.length();
            final long gapEnd = i + 1 < ops.size() ? offsets[i + 1] : end;
            for (long o = gapStart; o < gapEnd; o++) {
                if (memB[(int) o] != 0 || memA[(int) (READ_AREA + o)] != 0) {
                    assertThat(memB[(int) o])
                            .as("B byte %d outside any target", o)
                            .isZero();
                    assertThat(memA[(int) (READ_AREA + o)])
                            .as("A byte %d outside any READ target", o)
                            .isZero();
                }
            }
        }
    }

    private static void assertSame(
            final byte[] src, final long srcOff, final byte[] dst, final long dstOff, final int len, final int i) {
        if (!java.util.Arrays.equals(src, (int) srcOff, (int) srcOff + len, dst, (int) dstOff, (int) dstOff + len)) {
            for (int o = 0; o < len; o++) {
                assertThat(dst[(int) dstOff + o]).as("op %d byte %d", i, o).isEqualTo(src[(int) srcOff + o]);
            }
        }
    }

    private static void fill(final Fabric.Host h, final long off, final long len, final SplittableRandom rnd) {
        final byte[] bytes = new byte[(int) len];
        for (int o = 0; o < len; o += 8) {
            final long v = rnd.nextLong();
            for (int k = 0; k < 8; k++) {
                bytes[o + k] = (byte) (v >>> (8 * k));
            }
        }
        h.memory.buffer().setBytes((int) off, bytes);
    }

    private static void zero(final Fabric.Host h, final long off, final long len) {
        h.memory.buffer().setZero((int) off, (int) len);
    }
}
