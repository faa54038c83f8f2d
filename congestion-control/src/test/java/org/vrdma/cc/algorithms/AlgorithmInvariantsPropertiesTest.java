package org.vrdma.cc.algorithms;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.vrdma.cc.CongestionControl;
import org.vrdma.cc.CongestionControls;
import org.vrdma.cc.FlowContext;
import org.vrdma.cc.IntTelemetry;

/** Whatever happens, every reference algorithm keeps a usable rate and window. */
class AlgorithmInvariantsPropertiesTest {
    private static final long LINE = 100_000_000_000L;
    private static final FlowContext FLOW = FlowContext.of(LINE, 8_000, 4096, 7);

    /** One event a NIC may see, with its parameters (unused ones are ignored). */
    record Event(int kind, long gapNs, int bytes, long rttNs, boolean ecn, long queueBytes, long txDeltaBytes) {}

    @Property(tries = 300, seed = "42")
    void rateAndWindowStayValid(
            @ForAll("algorithms") final String name,
            @ForAll @Size(max = 300) final List<@From("events") Event> events) {
        final CongestionControl cc = CongestionControls.create(name, (String) null, FLOW);
        final IntTelemetry telemetry = new IntTelemetry();
        final long floorBps = switch (name) {
            case "dcqcn", "timely", "hpcc" -> 100_000_000L;
            default -> 1L;
        };
        long nowNs = 1_000;
        long txBytes = 0;
        for (final Event e : events) {
            nowNs += e.gapNs();
            while (cc.nextTimerNs() <= nowNs) {
                final long before = cc.nextTimerNs();
                cc.onTimer(Math.max(before, nowNs - e.gapNs()));
                assertThat(cc.nextTimerNs()).as("timer must move on").isNotEqualTo(before);
            }
            switch (e.kind()) {
                case 0 -> cc.onPacketSent(nowNs, e.bytes());
                case 1 -> cc.onAck(nowNs, e.bytes(), e.rttNs(), e.ecn());
                case 2 -> cc.onCnp(nowNs);
                case 3 -> cc.onLoss(nowNs, e.bytes());
                case 4 -> cc.onTimeout(nowNs);
                case 5 -> {
                    txBytes += e.txDeltaBytes();
                    cc.onAck(nowNs, e.bytes(), e.rttNs(), e.ecn());
                    telemetry.reset().addHop(e.queueBytes(), txBytes, nowNs, LINE);
                    cc.onInt(nowNs, telemetry);
                }
                default -> cc.onTimer(nowNs);
            }
            assertThat(cc.rateBps()).as("%s rate after %s", name, e).isBetween(floorBps, LINE);
            assertThat(cc.windowBytes()).as("%s window after %s", name, e).isPositive();
            assertThat(cc.toString()).doesNotContain("NaN").doesNotContain("Infinity");
        }
    }

    @Provide
    Arbitrary<String> algorithms() {
        return Arbitraries.of("dcqcn", "timely", "swift", "hpcc", "dctcp", "static");
    }

    @Provide
    Arbitrary<Event> events() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 6),
                        Arbitraries.longs().between(0, 200_000),
                        Arbitraries.integers().between(0, 9_000),
                        Arbitraries.oneOf(
                                Arbitraries.just(-1L), Arbitraries.longs().between(0, 5_000_000)),
                        Arbitraries.of(true, false),
                        Arbitraries.longs().between(0, 10_000_000),
                        Arbitraries.longs().between(0, 10_000_000))
                .as(Event::new);
    }
}
