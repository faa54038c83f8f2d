package org.vrdma.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class EventHeapTest {
    private final List<Long> fired = new ArrayList<>();
    private final TimerHandler record = (nowNs, id) -> fired.add(id);

    @Test
    void expiresInDeadlineOrderThenInsertionOrder() {
        EventHeap queue = new EventHeap(2);
        long late = queue.add(300, record);
        long firstAt100 = queue.add(100, record);
        long early = queue.add(50, record);
        long secondAt100 = queue.add(100, record);
        long thirdAt100 = queue.add(100, record);

        while (!queue.isEmpty()) {
            queue.fireEarliest(queue.peekDeadlineNs());
        }

        assertThat(fired).containsExactly(early, firstAt100, secondAt100, thirdAt100, late);
    }

    @Test
    void cancelledTimersNeverFireAndStaleIdsAreHarmless() {
        EventHeap queue = new EventHeap();
        long a = queue.add(10, record);
        long b = queue.add(20, record);
        long c = queue.add(30, record);

        assertThat(queue.cancel(b)).isTrue();
        assertThat(queue.cancel(b)).isFalse();
        assertThat(queue.fireEarliest(10)).isEqualTo(a);
        assertThat(queue.cancel(a)).as("already expired").isFalse();

        // The slot of a is reused; its old id must not cancel the new timer.
        long d = queue.add(40, record);
        assertThat(d).isNotEqualTo(a);
        assertThat(queue.cancel(a)).isFalse();
        assertThat(queue.isPending(d)).isTrue();
        assertThat(queue.cancel(TimerService.NO_TIMER)).isFalse();
        assertThat(queue.cancel(-5)).isFalse();
        assertThat(queue.cancel(Long.MAX_VALUE)).isFalse();

        while (!queue.isEmpty()) {
            queue.fireEarliest(queue.peekDeadlineNs());
        }
        assertThat(fired).containsExactly(a, c, d);
    }

    @Test
    void handlesMillionsOfPendingTimersWithRandomCancels() {
        EventHeap queue = new EventHeap();
        SplittableRandom random = new SplittableRandom(42);
        int n = 2_000_000;
        long[] ids = new long[n];
        long[] deadlines = new long[n];
        for (int i = 0; i < n; i++) {
            deadlines[i] = random.nextLong(1_000_000_000L);
            ids[i] = queue.add(deadlines[i], (nowNs, id) -> {});
        }
        int cancelled = 0;
        for (int i = 0; i < n; i += 3) {
            assertThat(queue.cancel(ids[i])).isTrue();
            cancelled++;
        }
        assertThat(queue.size()).isEqualTo(n - cancelled);

        long previous = Long.MIN_VALUE;
        int expired = 0;
        while (!queue.isEmpty()) {
            long deadline = queue.peekDeadlineNs();
            assertThat(deadline).isGreaterThanOrEqualTo(previous);
            previous = deadline;
            queue.fireEarliest(deadline);
            expired++;
        }
        assertThat(expired).isEqualTo(n - cancelled);
    }

    @Test
    void handlerMayRescheduleItself() {
        EventHeap queue = new EventHeap();
        int[] runs = new int[1];
        TimerHandler periodic = new TimerHandler() {
            @Override
            public void onTimer(long nowNs, long timerId) {
                if (++runs[0] < 5) {
                    queue.add(nowNs + 10, this);
                }
            }
        };
        queue.add(0, periodic);
        long last = 0;
        while (!queue.isEmpty()) {
            last = queue.peekDeadlineNs();
            queue.fireEarliest(last);
        }
        assertThat(runs[0]).isEqualTo(5);
        assertThat(last).isEqualTo(40);
    }

    @Test
    void matchesAReferenceOrderThroughCancelsRebuildsAndReAdds() {
        matchesReferenceOrder(7, 0, 1000, 0);
    }

    @Test
    void matchesAReferenceOrderWithEventsNearFarAndInThePast() {
        // Deadlines up to 4x the calendar's window ahead, one in eight before the last one run: events
        // wait in both the calendar and the heap, and the earlier head must always run first.
        matchesReferenceOrder(11, 0, 4L * EventHeap.CALENDAR_NS, 8);
        // Ties: few distinct deadlines, so buckets hold many events in the order they were added.
        matchesReferenceOrder(13, 0, 3, 0);
        // Ties across the two: deadlines at the window's edge wait in the heap, and once time moves
        // on, later events with the same deadlines wait in the calendar; the heap's run first.
        matchesReferenceOrder(17, EventHeap.CALENDAR_NS - 2, 4, 0);
    }

    private void matchesReferenceOrder(long seed, long offsetNs, long spreadNs, int pastOneIn) {
        EventHeap queue = new EventHeap();
        java.util.TreeMap<long[], Long> reference =
                new java.util.TreeMap<>((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        java.util.Map<Long, long[]> keyOf = new java.util.HashMap<>();
        List<Long> pending = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(seed);
        long seq = 0;
        long now = 0;
        for (int step = 0; step < 200_000; step++) {
            if (random.nextInt(3) == 0 && !reference.isEmpty()) {
                // A peek between adds and cancels: the earliest it found must not outlive them.
                assertThat(queue.peekDeadlineNs()).isEqualTo(reference.firstKey()[0]);
                assertThat(queue.peekId()).isEqualTo(reference.firstEntry().getValue());
            }
            int op = random.nextInt(10);
            if (op < 5) {
                long deadline = pastOneIn > 0 && random.nextInt(pastOneIn) == 0
                        ? now - random.nextLong(spreadNs)
                        : now + offsetNs + random.nextLong(spreadNs);
                long[] key = {deadline, seq++};
                long id = queue.add(key[0], record);
                reference.put(key, id);
                keyOf.put(id, key);
                pending.add(id);
            } else if (op < 9 && !pending.isEmpty()) {
                // Cancel most events so stale entries pile up and the heap rebuilds.
                long id = pending.remove(random.nextInt(pending.size()));
                assertThat(queue.cancel(id)).isTrue();
                assertThat(queue.isPending(id)).isFalse();
                reference.remove(keyOf.remove(id));
            } else if (!reference.isEmpty()) {
                var first = reference.pollFirstEntry();
                assertThat(queue.peekDeadlineNs()).isEqualTo(first.getKey()[0]);
                now = first.getKey()[0];
                assertThat(queue.fireEarliest(now)).isEqualTo(first.getValue());
                assertThat(queue.cancel(first.getValue())).isFalse();
                pending.remove(first.getValue());
                keyOf.remove(first.getValue());
            }
            assertThat(queue.size()).isEqualTo(reference.size());
        }
        while (!reference.isEmpty()) {
            var first = reference.pollFirstEntry();
            assertThat(queue.fireEarliest(queue.peekDeadlineNs())).isEqualTo(first.getValue());
        }
        assertThat(queue.isEmpty()).isTrue();
        assertThat(queue.peekDeadlineNs()).isEqualTo(Long.MAX_VALUE);
    }
}
