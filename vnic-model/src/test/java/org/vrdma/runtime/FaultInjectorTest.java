package org.vrdma.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FaultInjectorTest {
    private static final int FRAMES = 200_000;

    @Test
    void randomLossRateMatchesConfiguration() {
        FaultInjector faults = new FaultInjector(FaultConfig.randomLoss(0.01), new SplittableRandom(1));
        int dropped = 0;
        for (int i = 0; i < FRAMES; i++) {
            if (faults.judge() == FaultInjector.DROP) {
                dropped++;
            }
        }
        assertThat(dropped / (double) FRAMES).isCloseTo(0.01, within(0.001));
        assertThat(faults.randomDrops()).isEqualTo(dropped);
        assertThat(faults.framesJudged()).isEqualTo(FRAMES);
    }

    @Test
    void gilbertElliottGivesTheConfiguredLossRateInBursts() {
        FaultInjector faults = new FaultInjector(FaultConfig.burstLoss(0.02, 8), new SplittableRandom(2));
        int dropped = 0;
        int bursts = 0;
        boolean previousDropped = false;
        for (int i = 0; i < 1_000_000; i++) {
            boolean drop = faults.judge() == FaultInjector.DROP;
            if (drop) {
                dropped++;
                if (!previousDropped) {
                    bursts++;
                }
            }
            previousDropped = drop;
        }
        assertThat(dropped / 1e6).isCloseTo(0.02, within(0.003));
        assertThat(dropped / (double) bursts).as("mean burst length").isCloseTo(8.0, within(0.8));
        assertThat(faults.burstDrops()).isEqualTo(dropped);
    }

    @Test
    void duplicatesReorderingAndJitterFollowTheirSettings() {
        FaultConfig config =
                FaultConfig.NONE.withDuplicates(0.05).withReordering(0.1, 7_000).withDelay(1_000, 500);
        FaultInjector faults = new FaultInjector(config, new SplittableRandom(3));
        int duplicates = 0;
        int held = 0;
        for (int i = 0; i < FRAMES; i++) {
            int verdict = faults.judge();
            assertThat(verdict).isNotEqualTo(FaultInjector.DROP);
            long delay = faults.delayNs();
            if (delay >= 7_000) {
                held++;
                assertThat(delay).isBetween(8_000L, 8_500L);
            } else {
                assertThat(delay).isBetween(1_000L, 1_500L);
            }
            if (verdict == FaultInjector.DUPLICATE) {
                duplicates++;
                assertThat(faults.duplicateDelayNs()).isBetween(1_000L, 1_500L);
            }
        }
        assertThat(duplicates / (double) FRAMES).isCloseTo(0.05, within(0.003));
        assertThat(held / (double) FRAMES).isCloseTo(0.1, within(0.005));
        assertThat(faults.reordered()).isEqualTo(held);
    }

    @Test
    void sameSeedSameVerdicts() {
        FaultConfig config = FaultConfig.burstLoss(0.05, 4).withLoss(0.01).withDuplicates(0.02);
        FaultInjector a = new FaultInjector(config, new SplittableRandom(9));
        FaultInjector b = new FaultInjector(config, new SplittableRandom(9));
        for (int i = 0; i < 10_000; i++) {
            assertThat(a.judge()).isEqualTo(b.judge());
        }
    }

    @Test
    void configurationIsValidatedAndCanChangeAtRunTime() {
        assertThatThrownBy(() -> FaultConfig.randomLoss(-0.1)).hasMessageContaining("lossProbability");
        assertThatThrownBy(() -> FaultConfig.NONE.withReordering(0.1, 0)).hasMessageContaining("reorderDelayNs");
        assertThatThrownBy(() -> FaultConfig.burstLoss(0.1, 0.5)).hasMessageContaining("meanBurstFrames");
        FaultInjector faults = new FaultInjector(FaultConfig.NONE, new SplittableRandom(4));
        assertThat(faults.judge()).isEqualTo(FaultInjector.DELIVER);
        faults.config(FaultConfig.randomLoss(1.0));
        assertThat(faults.judge()).isEqualTo(FaultInjector.DROP);
    }
}
