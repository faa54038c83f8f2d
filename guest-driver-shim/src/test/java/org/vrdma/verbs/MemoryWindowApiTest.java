package org.vrdma.verbs;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Memory windows through the Java verbs API between two embedded hosts over UDP on 127.0.0.1. */
class MemoryWindowApiTest {
    private VerbsHost hostA;
    private VerbsHost hostB;

    @BeforeEach
    void start() {
        hostA = VerbsHost.start(Peer.hostOptions("mw-a", "10.0.0.1"));
        hostB = VerbsHost.start(Peer.hostOptions("mw-b", "10.0.0.2"));
    }

    @AfterEach
    void stop() {
        hostA.close();
        hostB.close();
    }

    @Test
    void type2WindowsGrantTheirRangeUntilInvalidated() {
        MemoryWindowScenarios.type2(hostA.device(), hostB.device());
    }

    @Test
    void type1WindowsBindInOrderAndErrorsAreTyped() {
        MemoryWindowScenarios.type1AndErrors(hostA.device(), hostB.device());
    }
}
