package org.vrdma.harness.perf;

import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.SendWorkRequest;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * perftest's {@code ib_write_bw}/{@code ib_read_bw} loop: keep {@code txDepth} RDMA operations of
 * one size outstanding until {@code iterations} have completed, and time it with the endpoint's
 * clock. Runs on the requester's thread; the responder side is all transport.
 */
public final class BandwidthTest implements CompletionPump.Listener {
    private final RdmaEndpoint local;
    private final QueuePair qp;
    private final WrOpcode opcode;
    private final int sizeBytes;
    private final long iterations;
    private final int txDepth;
    private final long remoteAddr;
    private final int rkey;
    private final long slots;
    private final SendWorkRequest wr = new SendWorkRequest(1);
    private CompletionPump pump;

    private long posted;
    private long completed;
    private long startNs;
    private long endNs;
    private volatile boolean done;
    private volatile WcStatus failure;

    public BandwidthTest(
            RdmaEndpoint local,
            QueuePair qp,
            WrOpcode opcode,
            int sizeBytes,
            long iterations,
            int txDepth,
            long remoteAddr,
            int rkey) {
        this(local, qp, opcode, sizeBytes, iterations, txDepth, remoteAddr, rkey, sizeBytes);
    }

    /**
     * Like perftest, but message {@code i} moves the {@code i mod (spanBytes / sizeBytes)}-th slot
     * of a {@code spanBytes} window, at the same offset locally and remotely, so a run covers the
     * whole window instead of one message-sized buffer.
     */
    public BandwidthTest(
            RdmaEndpoint local,
            QueuePair qp,
            WrOpcode opcode,
            int sizeBytes,
            long iterations,
            int txDepth,
            long remoteAddr,
            int rkey,
            long spanBytes) {
        if (opcode != WrOpcode.RDMA_WRITE && opcode != WrOpcode.RDMA_READ) {
            throw new IllegalArgumentException("bandwidth test runs RDMA_WRITE or RDMA_READ, not " + opcode);
        }
        this.local = local;
        this.qp = qp;
        this.opcode = opcode;
        this.sizeBytes = sizeBytes;
        this.iterations = iterations;
        this.txDepth = txDepth;
        this.remoteAddr = remoteAddr;
        this.rkey = rkey;
        this.slots = Math.max(1, spanBytes / sizeBytes);
    }

    /** Starts posting; call on the requester's thread. */
    public void start() {
        pump = new CompletionPump(local, this);
        startNs = local.timers.nowNs();
        while (posted < iterations && posted - completed < txDepth) {
            post();
        }
    }

    private void post() {
        wr.reset();
        wr.wrId = posted;
        wr.opcode = opcode;
        wr.sendFlags = SendFlags.SIGNALED;
        long offset = (posted % slots) * sizeBytes;
        wr.remoteAddr = remoteAddr + offset;
        wr.rkey = rkey;
        wr.addSge(RdmaEndpoint.BUFFER_VA + offset, sizeBytes, local.mr.lkey());
        qp.postSend(wr);
        posted++;
    }

    @Override
    public void onCompletion(WorkCompletion wc, long nowNs) {
        if (done) {
            return;
        }
        if (wc.status != WcStatus.SUCCESS) {
            failure = wc.status;
            finish(nowNs);
            return;
        }
        completed++;
        if (completed == iterations) {
            finish(nowNs);
            return;
        }
        while (posted < iterations && posted - completed < txDepth) {
            post();
        }
    }

    private void finish(long nowNs) {
        endNs = nowNs;
        pump.close();
        done = true;
    }

    public boolean isDone() {
        return done;
    }

    /** The completion status that stopped the test, or null. */
    public WcStatus failure() {
        return failure;
    }

    public long completed() {
        return completed;
    }

    public long elapsedNs() {
        return endNs - startNs;
    }

    public int sizeBytes() {
        return sizeBytes;
    }

    /** Average goodput in Gbit/s over the run. */
    public double gbps() {
        long ns = elapsedNs();
        return ns <= 0 ? 0 : completed * (double) sizeBytes * 8 / ns;
    }

    /** Messages per second in millions. */
    public double mpps() {
        long ns = elapsedNs();
        return ns <= 0 ? 0 : completed * 1e3 / ns;
    }
}
