package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Debian's unmodified perftest on the vNIC, as far as the control path reaches today. */
class PerftestTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private ShimFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        ShimFixture.requireCommand("ib_write_bw", "perftest");
        fx = new ShimFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (fx != null) {
            fx.close();
        }
    }

    @Test
    void ibWriteBwOpensTheDeviceCreatesPdMrAndCqThenFailsCleanlyAtQpCreation() throws Exception {
        final int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        final List<String> server = List.of("ib_write_bw", "-d", "vrdma0", "-p", Integer.toString(port));
        final ShimFixture.Program listener = fx.start(server);
        final ShimFixture.Program client = fx.startWhenListening(port, withHost(server, "127.0.0.1"));
        final int clientExit = client.waitFor(WAIT);
        final int serverExit = listener.waitFor(WAIT);
        System.out.println("client:\n" + client.output() + "\nserver:\n" + listener.output());
        for (final ShimFixture.Program p : List.of(client, listener)) {
            assertThat(p.output())
                    .contains("ibv_create_qp: not supported by this vNIC yet")
                    .contains("Failed to create QP.")
                    .contains("Couldn't create IB resources");
        }
        assertThat(clientExit).isBetween(1, 127); // an error exit, not a crash
        assertThat(serverExit).isBetween(1, 127);
        // Both got through device open, PD, MR and CQ creation on the vNIC.
        assertThat(fx.server.succeeded(ControlProtocol.ALLOC_PD)).isGreaterThanOrEqualTo(2);
        assertThat(fx.server.succeeded(ControlProtocol.REG_MR)).isGreaterThanOrEqualTo(2);
        assertThat(fx.server.succeeded(ControlProtocol.CREATE_CQ)).isGreaterThanOrEqualTo(2);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "both sessions released");
    }

    private static List<String> withHost(final List<String> command, final String host) {
        final List<String> c = new ArrayList<>(command);
        c.add(host);
        return c;
    }
}
