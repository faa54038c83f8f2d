package org.vrdma.harness.perf;

import org.HdrHistogram.Histogram;
import org.vrdma.vnic.verbs.QueuePair;
import org.vrdma.vnic.verbs.RecvWorkRequest;
import org.vrdma.vnic.verbs.SendFlags;
import org.vrdma.vnic.verbs.SendWorkRequest;
import org.vrdma.vnic.verbs.WcOpcode;
import org.vrdma.vnic.verbs.WcStatus;
import org.vrdma.vnic.verbs.WorkCompletion;
import org.vrdma.vnic.verbs.WrOpcode;

/**
 * perftest's {@code ib_send_lat}: a SEND ping-pong between two RC QPs; each round trip's half is
 * one latency sample (HdrHistogram, nanoseconds). The initiator and the responder each run on
 * their own endpoint's thread.
 */
public final class LatencyTest {
    private static final int RECV_DEPTH = 16;

    private final Side initiator;
    private final Side responder;
    private final long iterations;
    private final Histogram histogram = new Histogram(3_600_000_000_000L, 3);
    private volatile boolean done;
    private volatile WcStatus failure;
    private long completed;
    private long sentAtNs;

    public LatencyTest(RdmaEndpoint a, QueuePair qpA, RdmaEndpoint b, QueuePair qpB, int sizeBytes, long iterations) {
        this.iterations = iterations;
        this.initiator = new Side(a, qpA, sizeBytes, true);
        this.responder = new Side(b, qpB, sizeBytes, false);
    }

    /** Prepares the responder: call on its thread before {@link #startInitiator()}. */
    public void startResponder() {
        responder.start();
    }

    /** Starts the ping-pong: call on the initiator's thread. */
    public void startInitiator() {
        initiator.start();
        sentAtNs = initiator.endpoint.timers.nowNs();
        initiator.send();
    }

    public boolean isDone() {
        return done;
    }

    public WcStatus failure() {
        return failure;
    }

    /** Half round-trip latencies in ns; read after {@link #isDone()}. */
    public Histogram histogram() {
        return histogram;
    }

    public long completed() {
        return completed;
    }

    private void fail(WcStatus status) {
        failure = status;
        done = true;
        // A process runs one side only: the other side's pump never started.
        if (initiator.pump != null) {
            initiator.pump.close();
        }
        if (responder.pump != null) {
            responder.pump.close();
        }
    }

    private final class Side implements CompletionPump.Listener {
        final RdmaEndpoint endpoint;
        final QueuePair qp;
        final int sizeBytes;
        final boolean isInitiator;
        final SendWorkRequest send = new SendWorkRequest(1);
        final RecvWorkRequest recv = new RecvWorkRequest(1);
        CompletionPump pump;
        /** Receives posted so far: each side receives exactly {@code iterations} messages, no more. */
        long recvsPosted;
        /** The initiator's own SENDs completed (acknowledged). */
        long sendsCompleted;

        Side(RdmaEndpoint endpoint, QueuePair qp, int sizeBytes, boolean isInitiator) {
            this.endpoint = endpoint;
            this.qp = qp;
            this.sizeBytes = sizeBytes;
            this.isInitiator = isInitiator;
        }

        void start() {
            pump = new CompletionPump(endpoint, this);
            for (int i = 0; i < RECV_DEPTH; i++) {
                postRecv();
            }
        }

        void finishIfDone() {
            if (completed == iterations && sendsCompleted == iterations) {
                done = true;
                pump.close();
            }
        }

        /** Posts a receive while this side still expects more messages, so a run leaves none behind. */
        void postRecv() {
            if (recvsPosted == iterations) {
                return;
            }
            recvsPosted++;
            recv.reset();
            recv.addSge(RdmaEndpoint.BUFFER_VA + sizeBytes, sizeBytes, endpoint.mr.lkey());
            qp.postRecv(recv);
        }

        void send() {
            send.reset();
            send.opcode = WrOpcode.SEND;
            send.sendFlags = SendFlags.SIGNALED;
            send.addSge(RdmaEndpoint.BUFFER_VA, sizeBytes, endpoint.mr.lkey());
            qp.postSend(send);
        }

        @Override
        public void onCompletion(WorkCompletion wc, long nowNs) {
            if (done) {
                return;
            }
            if (wc.status != WcStatus.SUCCESS) {
                fail(wc.status);
                return;
            }
            if (wc.opcode != WcOpcode.RECV) {
                // Our own SEND completed. The run ends when the initiator's last SEND has completed
                // too (its ACK may arrive after the last reply), so the next run finds an empty SQ.
                if (isInitiator) {
                    sendsCompleted++;
                    finishIfDone();
                }
                return;
            }
            postRecv();
            if (!isInitiator) {
                send();
                return;
            }
            histogram.recordValue(Math.max(0, (nowNs - sentAtNs) / 2));
            if (++completed == iterations) {
                finishIfDone();
                return;
            }
            sentAtNs = nowNs;
            send();
        }
    }
}
