package org.vrdma.shim;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.vrdma.verbs.IbvDevice;
import org.vrdma.verbs.IbvDeviceList;
import org.vrdma.verbs.MemoryWindowScenarios;

/**
 * Memory windows through the Java verbs API attached to a vNIC (two contexts, two applications, on
 * a vNIC whose wire loops back): the same checks as on an embedded host.
 */
class AttachedMemoryWindowTest {
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
    void type2WindowsGrantTheirRangeUntilInvalidated() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        MemoryWindowScenarios.type2(d, d);
    }

    @Test
    void type1WindowsBindInOrderAndErrorsAreTyped() {
        final IbvDevice d = IbvDeviceList.attach(fx.server.socketPath());
        MemoryWindowScenarios.type1AndErrors(d, d);
    }
}
