package org.vrdma.vnic.verbs;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.TransportConfig;

/** Random work request sequences under random faults keep every reliable-delivery invariant. */
class RcPropertiesTest {
    @Property(tries = 25)
    void randomWorkUnderRandomFaults(
            @ForAll RecoveryMode mode,
            @ForAll("ops") List<Workload.Op> ops,
            @ForAll("faults") FaultConfig faults,
            @ForAll("mtus") Mtu mtu,
            @ForAll long seed) {
        try (Fabric f = new Fabric(seed, Fabric.fastLink(), TransportConfig.defaults())) {
            f.faults(faults);
            final QueuePair[] qps = f.connectRc(mode, new QpCap(32, 256, 4, 4, 64), mtu);
            new Workload(f, qps[0], 32).run(ops, seed);
        }
    }

    @Provide
    Arbitrary<List<Workload.Op>> ops() {
        final Arbitrary<Workload.Op> op = Arbitraries.of(Workload.Kind.class).flatMap(k -> switch (k) {
            case FETCH_ADD, CMP_SWAP -> Arbitraries.just(new Workload.Op(k, 8));
            case SEND_INLINE -> Arbitraries.integers().between(0, 64).map(n -> new Workload.Op(k, n));
            default -> Arbitraries.integers().between(0, 9000).map(n -> new Workload.Op(k, n));
        });
        return op.list().ofMinSize(1).ofMaxSize(40).map(ArrayList::new);
    }

    @Provide
    Arbitrary<FaultConfig> faults() {
        return Combinators.combine(
                        Arbitraries.doubles().between(0, 0.08),
                        Arbitraries.doubles().between(0, 0.05),
                        Arbitraries.doubles().between(0, 0.05),
                        Arbitraries.of(false, true))
                .as((loss, reorder, dup, burst) -> {
                    final FaultConfig base = burst ? FaultConfig.burstLoss(loss / 2, 3) : FaultConfig.randomLoss(loss);
                    return base.withReordering(reorder, 2_000).withDuplicates(dup);
                });
    }

    @Provide
    Arbitrary<Mtu> mtus() {
        return Arbitraries.of(Mtu.MTU_256, Mtu.MTU_1024, Mtu.MTU_4096);
    }
}
