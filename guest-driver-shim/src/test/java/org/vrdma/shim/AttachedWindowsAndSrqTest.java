package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.MemoryWindowScenarios;
import org.vrdma.verbs.SrqResizeScenario;

/**
 * Memory windows and {@code ibv_modify_srq} resizing through the Java verbs API attached to a vNIC
 * whose wire loops back (two contexts, two applications): the same checks as on an embedded host.
 */
class AttachedWindowsAndSrqTest {
    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    AttachedWindowsAndSrqTest() throws Exception {
        fx = new ShimFixture();
    }

    private IbvDevice attach() {
        return IbvDeviceList.attach(fx.server.socketPath());
    }

    @Test
    void type2WindowsGrantTheirRangeUntilInvalidated() {
        final IbvDevice d = attach();
        MemoryWindowScenarios.type2(d, d);
    }

    @Test
    void type1WindowsBindInOrderAndErrorsAreTyped() {
        final IbvDevice d = attach();
        MemoryWindowScenarios.type1AndErrors(d, d);
    }

    /** Growing from 4 to 40 moves the queue to a new ring of 64 slots (MODIFY_SRQ with the ring), shrinking stays in it. */
    @Test
    void aSharedReceiveQueueGrowsPastItsRingAndShrinksKeepingItsReceivesInOrder() {
        final IbvDevice d = attach();
        SrqResizeScenario.run(d, d);
        assertThat(fx.server.succeeded(ControlProtocol.MODIFY_SRQ))
                .as("grow, shrink")
                .isEqualTo(2);
    }
}
