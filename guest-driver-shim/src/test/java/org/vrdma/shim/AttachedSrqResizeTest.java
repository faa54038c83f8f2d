package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.SrqResizeScenario;

/**
 * {@code ibv_modify_srq} resizing through the attached Java verbs API: growing from 4 to 40 moves
 * the queue to a new ring of 64 slots (MODIFY_SRQ with the ring), shrinking stays in it.
 */
class AttachedSrqResizeTest {
    private ShimFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new ShimFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (fx != null) {
            fx.close();
        }
    }

    @Test
    void aSharedReceiveQueueGrowsPastItsRingAndShrinksKeepingItsReceivesInOrder() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        SrqResizeScenario.run(d, d);
        assertThat(fx.server.succeeded(ControlProtocol.MODIFY_SRQ))
                .as("grow, shrink")
                .isEqualTo(2);
    }
}
