package org.vrdma.harness.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.transport.RateWindowSource;

class CappedWindowTest {
    /**
     * The real-time backends wrap every flow's algorithm in a window cap: an event the wrapper does
     * not forward never reaches the algorithm (a spurious timeout lost this way left Swift's cut in
     * place).
     */
    @Test
    void forwardsEveryEventOfTheSource() throws Exception {
        final List<String> missing = new ArrayList<>();
        for (Method m : RateWindowSource.class.getMethods()) {
            if (m.isDefault()
                    && FlowAgent.CappedWindow.class
                                    .getMethod(m.getName(), m.getParameterTypes())
                                    .getDeclaringClass()
                            != FlowAgent.CappedWindow.class) {
                missing.add(m.getName());
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    void spuriousTimeoutReachesTheAlgorithm() {
        final List<Long> seen = new ArrayList<>();
        final RateWindowSource inner = new RateWindowSource() {
            @Override
            public long rateBps() {
                return 1_000_000_000L;
            }

            @Override
            public long windowBytes() {
                return 1L << 30;
            }

            @Override
            public void onSpuriousTimeout(final long nowNs) {
                seen.add(nowNs);
            }
        };
        final FlowAgent.CappedWindow capped = new FlowAgent.CappedWindow(inner, 65_536);

        capped.onSpuriousTimeout(42);

        assertThat(seen).containsExactly(42L);
        assertThat(capped.windowBytes()).isEqualTo(65_536);
    }
}
