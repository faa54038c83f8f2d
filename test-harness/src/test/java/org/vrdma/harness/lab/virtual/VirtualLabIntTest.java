package org.vrdma.harness.lab.virtual;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.vrdma.harness.lab.Lab;
import org.vrdma.harness.lab.LabBackends;
import org.vrdma.harness.lab.LabLoader;
import org.vrdma.harness.lab.LabResults;
import org.vrdma.harness.lab.LabRun;
import org.vrdma.harness.lab.RunProgress;

/** INT on paths longer than the option's records: HPCC must still see the receiver's ToR port. */
class VirtualLabIntTest {
    @Test
    void hpccSeesTheReceiversPortAcrossPodsOfAFatTree() {
        // k=4 fat tree: h0..h3 in pod 0, so each sender's path to h0 has six links (two host links,
        // four switch-to-switch), one more than the INT option's five records. Six 2 MB flows into
        // h0 offer 600 Gbit/s to its 100 Gbit/s port, the last hop of every path.
        StringBuilder flows = new StringBuilder();
        String[] senders = {"h4", "h5", "h8", "h9", "h12", "h13"};
        for (int i = 0; i < senders.length; i++) {
            flows.append(i == 0 ? "" : ", ")
                    .append("{\"src\": \"")
                    .append(senders[i])
                    .append("\", \"dst\": \"h0\", \"bytes\": 2000000, \"startUs\": 0}");
        }
        Lab lab = LabLoader.parse(
                "{\"name\": \"int-fat-tree\", \"seed\": 1, \"durationUs\": 10, \"drainUs\": 5000, \"sampleIntervalUs\": 5,"
                        + " \"topology\": {\"type\": \"fatTree\", \"k\": 4,"
                        + " \"hostLink\": {\"rateGbps\": 100, \"delayNs\": 1000, \"bufferBytes\": 4194304},"
                        + " \"fabricLink\": {\"rateGbps\": 400, \"delayNs\": 1000, \"bufferBytes\": 16777216}},"
                        + " \"transport\": {\"payload\": \"length\"}, \"cc\": {\"algorithm\": \"hpcc\"},"
                        + " \"workloads\": [{\"type\": \"flows\", \"flows\": [" + flows + "]}]}",
                false);
        LabResults r;
        try (LabRun run = LabBackends.get("virtual").start(lab)) {
            r = run.run(RunProgress.NONE);
        }
        assertThat(r.counters().flowsFinished()).isEqualTo(6);
        assertThat(r.counters().bufferDrops()).isZero();
        // Each flow's window is at most one BDP, so no buffer overflows either way; but a sender
        // that sees h0's port drains its queue (about 11 kB on average from 0.2 to 0.8 ms), one
        // that does not keeps its full window queued there until the flows end (about 1.8 MB).
        assertThat(r.queues().series().getFirst().name()).isEqualTo("tor0-0->h0");
        double[] busiest = r.queues().series().getFirst().values();
        double sumKb = 0;
        int from = (int) (200_000 / r.queues().intervalNs());
        int to = (int) (800_000 / r.queues().intervalNs());
        for (int i = from; i < to; i++) {
            sumKb += busiest[i];
        }
        assertThat(sumKb / (to - from)).isLessThan(300);
    }
}
