package org.vrdma.harness.lab;

import java.util.List;

/** Labs built in code: the benchmark's fat tree, the same network as {@code labs/hpcc-fat-tree.json}. */
public final class ReadyLabs {
    private ReadyLabs() {}

    /**
     * The HPCC paper's fat tree (Li et al., SIGCOMM 2019, section 5): 320 hosts at 100 Gbit/s, 20
     * ToRs, 20 aggregation and 16 core switches with 400 Gbit/s fabric links, 1 µs per link, ECN
     * thresholds scaled with the rate, WebSearch flows at {@code load} with congestion control
     * {@code cc}.
     */
    public static Lab hpccFatTree(String cc, double load, long durationUs, long drainUs, long seed) {
        LinkSpec host = new LinkSpec(100.0, 1000L, 4L << 20, new LinkSpec.EcnSpec(100_000L, 400_000L, 0.2), null, null);
        LinkSpec fabric =
                new LinkSpec(400.0, 1000L, 16L << 20, new LinkSpec.EcnSpec(400_000L, 1_600_000L, 0.2), null, null);
        return new Lab(
                        "hpcc-fat-tree",
                        "HPCC paper fat tree: 320 hosts at 100G under a 400G fabric, WebSearch load " + load,
                        seed,
                        durationUs,
                        drainUs,
                        null,
                        TopologySpec.fatTree(8, 5, 16, host, fabric),
                        null,
                        null,
                        CcSpec.of(cc),
                        List.of(new WorkloadSpec.Poisson("websearch", load, null, null, null, null)),
                        100L,
                        null)
                .withDefaults();
    }
}
