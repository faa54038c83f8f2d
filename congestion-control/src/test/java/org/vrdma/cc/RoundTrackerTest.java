package org.vrdma.cc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RoundTrackerTest {
    private static void send(final RoundTracker tracker, final int packets) {
        for (int i = 0; i < packets; i++) {
            tracker.onSent(1_000);
        }
    }

    @Test
    void aRoundEndsWithTheFirstAckBeyondWhatWasSentAtItsStart() {
        final RoundTracker tracker = new RoundTracker();
        assertThat(tracker.started()).isFalse();
        assertThat(tracker.roundEnded()).isFalse();
        send(tracker, 4);
        tracker.startRound();
        send(tracker, 2);
        tracker.onAcked(4_000);
        assertThat(tracker.roundEnded()).isFalse();
        tracker.onAcked(1_000);
        assertThat(tracker.roundEnded()).isTrue();
        assertThat(tracker.nextSequenceBytes()).isEqualTo(6_000);
    }

    @Test
    void goBackNRetransmissionsDoNotStretchTheRound() {
        final RoundTracker tracker = new RoundTracker();
        send(tracker, 10);
        tracker.startRound(); // ends beyond byte 10 000
        tracker.onAcked(2_000);
        tracker.onLost(8_000); // NAK: rewind to 2 000; what is re-sent from there is sent in the round
        assertThat(tracker.nextSequenceBytes()).isEqualTo(2_000);
        send(tracker, 9); // 8 again and 1 new: 18 000 bytes on the wire in total
        assertThat(tracker.roundEnded()).isFalse();
        tracker.onAcked(1_000); // the first re-sent packet
        assertThat(tracker.roundEnded()).isTrue();
        tracker.startRound();
        tracker.onAcked(8_000);
        assertThat(tracker.roundEnded()).isFalse();
        assertThat(tracker.ackedBytes()).isEqualTo(11_000);
        assertThat(tracker.outstandingBytes()).isZero();
    }

    @Test
    void aRoundOfAMessageSentBeforeAnyFeedbackEndsAfterTheRewind() {
        final RoundTracker tracker = new RoundTracker();
        send(tracker, 100); // the whole message left at line rate
        tracker.onAcked(1_000);
        tracker.startRound(); // would end only beyond the last byte
        tracker.onLost(99_000);
        send(tracker, 1);
        tracker.onAcked(1_000);
        assertThat(tracker.roundEnded()).isTrue();
    }

    @Test
    void aTimeoutRewindsToTheCumulativeAck() {
        final RoundTracker tracker = new RoundTracker();
        send(tracker, 5);
        tracker.onAcked(1_000);
        tracker.startRound();
        tracker.onTimeout();
        assertThat(tracker.nextSequenceBytes()).isEqualTo(1_000);
        send(tracker, 4);
        tracker.onAcked(1_000);
        assertThat(tracker.roundEnded()).isTrue();
    }

    @Test
    void aRewindBeforeAnyRoundStartsNone() {
        final RoundTracker tracker = new RoundTracker();
        send(tracker, 2);
        tracker.onLost(2_000);
        tracker.onTimeout();
        assertThat(tracker.started()).isFalse();
        assertThat(tracker.roundEnded()).isFalse();
    }

    @Test
    void unknownLossDoesNotRewind() {
        final RoundTracker tracker = new RoundTracker();
        send(tracker, 3);
        tracker.onLost(0);
        tracker.onLost(-5);
        assertThat(tracker.nextSequenceBytes()).isEqualTo(3_000);
    }

    @Test
    void headersOnTheWireDoNotPileUpAsOutstandingBytes() {
        // The RC requester reports 4154 wire bytes per packet and acknowledges 4096 per packet.
        final RoundTracker tracker = new RoundTracker(4096);
        for (int i = 0; i < 10_000; i++) {
            tracker.onSent(4154);
            tracker.onAcked(4096);
        }
        assertThat(tracker.outstandingBytes()).isZero();
        tracker.onSent(4154);
        tracker.startRound();
        tracker.onSent(4154);
        tracker.onAcked(4096);
        assertThat(tracker.roundEnded()).isFalse();
        tracker.onAcked(4096); // the packet sent after the round started
        assertThat(tracker.roundEnded()).isTrue();
    }

    @Test
    void withoutTheCapHeadersWouldStretchRounds() {
        final RoundTracker uncapped = new RoundTracker();
        for (int i = 0; i < 10_000; i++) {
            uncapped.onSent(4154);
            uncapped.onAcked(4096);
        }
        assertThat(uncapped.outstandingBytes()).isEqualTo(10_000 * 58L);
    }
}
