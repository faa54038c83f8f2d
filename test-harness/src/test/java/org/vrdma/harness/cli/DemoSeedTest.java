package org.vrdma.harness.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.harness.perf.RealTimeProfile;
import org.vrdma.harness.perf.RealTimeTwoHostLab;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FaultInjector;

/**
 * {@code ./vrdma demo --seed} seeds the faults the demo injects in real time too: the same seed draws
 * the same losses on each host's uplink, another seed others.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoSeedTest {
    private static final int DRAWS = 64;

    @Test
    void theSeedDecidesWhichPacketsTheRealTimeUplinksDrop() throws Exception {
        long[] first = lossPattern(7);
        long[] again = lossPattern(7);
        long[] other = lossPattern(8);
        assertThat(again).as("same seed, same drops").isEqualTo(first);
        assertThat(other[0]).as("another seed, other drops on host a").isNotEqualTo(first[0]);
        assertThat(other[1]).as("another seed, other drops on host b").isNotEqualTo(first[1]);
        assertThat(first[0]).as("the two hosts' streams differ").isNotEqualTo(first[1]);
    }

    /** For each host, which of 64 data packets its uplink's fault stream drops at 50% loss, as bits. */
    private static long[] lossPattern(long seed) throws Exception {
        DemoCommand demo = new DemoCommand();
        demo.seed = seed;
        demo.busyPollUs = 0;
        try (RealTimeTwoHostLab lab = (RealTimeTwoHostLab) demo.openLab(RealTimeProfile.transport())) {
            lab.faults(FaultConfig.randomLoss(0.5), FaultConfig.NONE);
            long a = lab.onA(() -> drops(lab.hostA().vswitch().uplink().dataFaults()));
            long b = lab.onB(() -> drops(lab.hostB().vswitch().uplink().dataFaults()));
            return new long[] {a, b};
        }
    }

    private static long drops(FaultInjector faults) {
        long bits = 0;
        for (int i = 0; i < DRAWS; i++) {
            if (faults.judge() == FaultInjector.DROP) {
                bits |= 1L << i;
            }
        }
        return bits;
    }
}
