package org.vrdma.harness.lab.virtual;

import org.junit.jupiter.api.Test;
import org.vrdma.harness.lab.LabLoader;

class DebugRunTest {
    @Test
    void debug() {
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.SIMPLE);
        String json = """
            {"name":"d","seed":7,"durationUs":2000,"drainUs":100,
             "topology":{"type":"pair"},
             "workloads":[{"type":"perftest","test":"writeBw","client":"h0","server":"h1","sizeBytes":65536,"iterations":200}]}
            """;
        try (VirtualLab lab = new VirtualLab(LabLoader.parse(json, false))) {
            long t0 = System.nanoTime();
            var r = lab.run((d, t, f, s) -> {});
            System.out.println("wall ms " + (System.nanoTime() - t0) / 1e6 + " events "
                    + lab.scheduler().eventsFired() + " now " + lab.scheduler().nowNs() + " tx "
                    + lab.linkTransmissions() + " " + r.perftests() + " " + r.counters());
        }
    }
}
