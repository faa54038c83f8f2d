package org.vrdma.verbs;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code ibv_modify_srq} resizing through the Java verbs API between two embedded hosts. */
class SrqResizeApiTest {
    private VerbsHost hostA;
    private VerbsHost hostB;

    @BeforeEach
    void start() {
        hostA = VerbsHost.start(Peer.hostOptions("srq-a", "10.0.0.1"));
        hostB = VerbsHost.start(Peer.hostOptions("srq-b", "10.0.0.2"));
    }

    @AfterEach
    void stop() {
        hostA.close();
        hostB.close();
    }

    @Test
    void aSharedReceiveQueueGrowsAndShrinksKeepingItsReceivesInOrder() {
        SrqResizeScenario.run(hostA.device(), hostB.device());
    }
}
