package org.vrdma.harness.cli;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Debian's unmodified perftest and {@code ibv_rc_pingpong} between two emulator hosts in two
 * processes on 127.0.0.1: each host is a vSwitch on a real UDP socket plus a vNIC serving the native
 * {@code libibverbs.so.1}; the programs find it through {@code LD_LIBRARY_PATH} and exchange QP
 * information over their default TCP out-of-band channel. The programs and assertions are those of
 * {@link NativePerftestCases}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativePerftestTest extends NativePerftestCases {
    private static final String IP = "127.0.0.1";

    private NativeVerbsHosts hosts;

    @BeforeAll
    void startHosts() throws Exception {
        hosts = new NativeVerbsHosts(
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.1",
                List.of(),
                IP + ":" + HostProcesses.freeUdpPort(IP),
                "10.9.0.2",
                IP);
    }

    @AfterAll
    void stopHosts() throws Exception {
        if (hosts != null) {
            hosts.close();
        }
    }

    @Override
    NativeVerbsHosts hosts() {
        return hosts;
    }

    @Test
    void ibSendBwInEventModeSleepsOnTheCompletionChannel() throws Exception {
        bandwidth("ib_send_bw", 65536, ITERATIONS, "-e");
    }

    @Test
    void ibvRcPingpongInEventModeSleepsOnTheCompletionChannel() throws Exception {
        rcPingpong("-e");
    }

    @Test
    void ibReadBwInEventModeSleepsOnTheCompletionChannel() throws Exception {
        bandwidth("ib_read_bw", 65536, ITERATIONS, "-e");
    }
}
