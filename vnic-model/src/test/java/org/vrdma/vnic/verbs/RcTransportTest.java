package org.vrdma.vnic.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/**
 * Every RC operation, in both recovery modes, over random loss of 0 to 10 %, burst loss,
 * reordering and duplication: data byte-exact and exactly once, completions in order and right.
 */
class RcTransportTest {
    static List<Arguments> cases() {
        final List<Arguments> cases = new ArrayList<>();
        final FaultConfig[] faults = {
            FaultConfig.NONE,
            FaultConfig.randomLoss(0.001),
            FaultConfig.randomLoss(0.01),
            FaultConfig.randomLoss(0.05),
            FaultConfig.randomLoss(0.10),
            FaultConfig.burstLoss(0.02, 4),
            FaultConfig.NONE.withReordering(0.05, 3_000),
            FaultConfig.NONE.withDuplicates(0.05),
            FaultConfig.randomLoss(0.02).withReordering(0.02, 2_000).withDuplicates(0.02)
        };
        for (final RecoveryMode mode : RecoveryMode.values()) {
            for (final FaultConfig f : faults) {
                for (final Workload.Kind k : Workload.Kind.values()) {
                    cases.add(Arguments.of(mode, f, new Workload.Kind[] {k}, k.name()));
                }
                cases.add(Arguments.of(mode, f, Workload.Kind.values(), "MIXED"));
            }
        }
        return cases;
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(RecoveryMode.class)
    void smokeMixedWithoutFaults(final RecoveryMode mode) {
        reliableDeliveryUnderFaults(mode, FaultConfig.NONE, Workload.Kind.values(), "SMOKE");
    }

    @ParameterizedTest(name = "{0} {1} {3}")
    @MethodSource("cases")
    void reliableDeliveryUnderFaults(
            final RecoveryMode mode, final FaultConfig faults, final Workload.Kind[] kinds, final String label) {
        final long seed = (mode.ordinal() * 1_000_003L) ^ faults.hashCode() ^ label.hashCode();
        try (Fabric f = new Fabric(seed, Fabric.fastLink(), TransportConfig.defaults())) {
            f.faults(faults);
            final QueuePair[] qps = f.connectRc(mode, new QpCap(64, 512, 4, 4, 64), Mtu.MTU_1024);
            final List<Workload.Op> ops = Workload.random(new SplittableRandom(seed), 60, kinds, 5000);
            new Workload(f, qps[0], 64).run(ops, seed);
            assertThat(qps[0].state()).isEqualTo(QpState.RTS);
            assertThat(qps[1].state()).isEqualTo(QpState.RTS);
        }
    }
}
