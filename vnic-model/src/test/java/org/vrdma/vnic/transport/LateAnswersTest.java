package org.vrdma.vnic.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LateAnswersTest {
    @Test
    void aLateAnswerHoldsWhileSuchPausesRecurAndHalvesAfterARunOfShortSamples() {
        final LateAnswers l = new LateAnswers();
        l.onRttSample(10_000);
        assertThat(l.allowanceNs()).as("nothing before a late answer").isZero();
        l.onLateAnswer(80_000);
        assertThat(l.allowanceNs()).isEqualTo(100_000);
        for (int i = 0; i < LateAnswers.DECAY_SAMPLES - 1; i++) {
            l.onRttSample(10_000);
        }
        assertThat(l.allowanceNs()).isEqualTo(100_000);
        // A pause of half the allowance or more: such pauses still happen, the run starts again.
        l.onRttSample(50_000);
        for (int i = 0; i < LateAnswers.DECAY_SAMPLES - 1; i++) {
            l.onRttSample(10_000);
        }
        assertThat(l.allowanceNs()).isEqualTo(100_000);
        l.onRttSample(10_000);
        assertThat(l.allowanceNs()).isEqualTo(50_000);
        // A longer pause than allowed raises it.
        l.onRttSample(60_000);
        assertThat(l.allowanceNs()).isEqualTo(75_000);
        l.onLateAnswer(40_000);
        assertThat(l.allowanceNs()).as("a shorter late answer lowers nothing").isEqualTo(75_000);
    }
}
