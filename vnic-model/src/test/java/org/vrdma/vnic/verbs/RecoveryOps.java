package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

/** Posting and checking one large WRITE or READ between the two hosts of a {@link Fabric}. */
final class RecoveryOps {
    private RecoveryOps() {}

    /** Fills {@code len} bytes at offset 0 of {@code h}'s memory with a pattern of {@code seed}. */
    static byte[] fill(final Fabric.Host h, final int len, final int seed) {
        final byte[] data = new byte[len];
        for (int i = 0; i < len; i++) {
            data[i] = (byte) (i * 31 + seed + (i >>> 12));
        }
        h.memory.buffer().setBytes(0, data);
        return data;
    }

    /** The first {@code len} bytes of {@code h}'s memory. */
    static byte[] contents(final Fabric.Host h, final int len) {
        final byte[] data = new byte[len];
        h.memory.buffer().getBytes(0, data);
        return data;
    }

    /** A signaled WRITE of {@code len} bytes from A's memory to B's, both at {@link Fabric#BASE}. */
    static void write(final Fabric f, final QueuePair qp, final int len) {
        post(f, qp, WrOpcode.RDMA_WRITE, len);
    }

    /** A signaled READ of {@code len} bytes of B's memory into A's, both at {@link Fabric#BASE}. */
    static void read(final Fabric f, final QueuePair qp, final int len) {
        post(f, qp, WrOpcode.RDMA_READ, len);
    }

    private static void post(final Fabric f, final QueuePair qp, final WrOpcode op, final int len) {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.wrId = 1;
        wr.opcode = op;
        wr.sendFlags = SendFlags.SIGNALED;
        wr.remoteAddr = Fabric.BASE;
        wr.rkey = f.b.mr.rkey();
        wr.addSge(Fabric.BASE, len, f.a.mr.lkey());
        qp.postSend(wr);
    }

    /** Runs until A's CQ holds one completion and asserts it succeeded. */
    static void awaitSuccess(final Fabric f, final long forNs) {
        assertThat(f.runUntil(() -> f.a.cq.size() == 1, forNs)).isTrue();
        final WorkCompletion[] wc = {new WorkCompletion()};
        assertThat(f.a.cq.poll(wc)).isEqualTo(1);
        assertThat(wc[0].status).isEqualTo(WcStatus.SUCCESS);
    }
}
