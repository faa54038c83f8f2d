package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.vrdma.vnic.verbs.MemoryRegion;

/**
 * A C program linked normally against libibverbs runs on the vNIC: its objects live in the verbs
 * model, the vNIC reaches its registered memory, and killing it releases everything.
 */
class VerbsClientTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Pattern READY = Pattern.compile(
            "READY name=vrdma0 max_cqe=65536 mtu=5 link_layer=2 lkey=(\\d+) rkey=(\\d+) addr=0x([0-9a-f]+) len=65536 cqe=(\\d+)");

    /** A new one per test: JUnit makes an instance per test and closes the field after it. */
    @AutoClose
    private final ShimFixture fx;

    private Path client;

    VerbsClientTest() throws Exception {
        fx = new ShimFixture();
        client = fx.compile("verbs_client.c");
    }

    @Test
    void registersMemoryTheVnicCanReadAndWriteAndKillingTheProgramReleasesItsObjects() throws Exception {
        final ShimFixture.Program p = fx.start(List.of(client.toString()));
        final Matcher m = READY.matcher(p.await("READY", WAIT));
        assertThat(m.matches()).as(p.output()).isTrue();
        final long addr = Long.parseUnsignedLong(m.group(3), 16);
        assertThat(Integer.parseInt(m.group(4))).isGreaterThanOrEqualTo(128);

        final List<VnicControlServer.SessionView> sessions = fx.server.sessions();
        assertThat(sessions).hasSize(1);
        final VnicControlServer.SessionView s = sessions.get(0);
        assertThat(s.pid()).isEqualTo((int) p.process.pid());
        assertThat(s.protectionDomains()).isEqualTo(1);
        assertThat(s.completionQueues()).isEqualTo(1);
        assertThat(s.channels()).isEqualTo(1);
        assertThat(s.memoryRegions()).hasSize(1);
        final MemoryRegion mr = s.memoryRegions().get(0);
        assertThat(mr.lkey()).isEqualTo(Integer.parseUnsignedInt(m.group(1)));
        assertThat(mr.addr()).isEqualTo(addr);
        assertThat(mr.length()).isEqualTo(65536);

        // The vNIC reads the application's buffer like a DMA engine...
        final byte[] seen = new byte[256];
        fx.server.onDevice(() -> {
            mr.backing().read(1000, seen, 0, seen.length);
            return null;
        });
        for (int i = 0; i < seen.length; i++) {
            assertThat(seen[i]).isEqualTo((byte) ((1000 + i) * 7 + 3));
        }
        // ...and writes into it; the application sees the bytes.
        final byte[] text = "written-by-the-vnic".getBytes(StandardCharsets.US_ASCII);
        fx.server.onDevice(() -> {
            mr.backing().write(0, text, 0, text.length);
            return null;
        });
        p.send("CHECK written-by-the-vnic");
        assertThat(p.await("CHECK", WAIT)).isEqualTo("CHECK OK");

        p.process.destroyForcibly();
        p.waitFor(WAIT);
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "the killed program's session is gone");
        assertThat(fx.server.onDevice(mr::isRegistered)).isFalse();
        // Everything went back to the device: it closes (EBUSY while any context were open).
        fx.server.close();
        fx.loop
                .submit(() -> {
                    fx.device.close();
                    fx.deviceClosed = true;
                })
                .get(ShimFixture.LOOP_WAIT_S, TimeUnit.SECONDS);
    }

    @Test
    void releasesEverythingInOrderOnAnOrdinaryExit() throws Exception {
        final ShimFixture.Program p = fx.start(List.of(client.toString()));
        p.await("READY", WAIT);
        p.send("EXIT");
        assertThat(p.await("DONE", WAIT)).isEqualTo("DONE");
        assertThat(p.waitFor(WAIT)).isZero();
        ShimFixture.eventually(WAIT, () -> fx.server.sessions().isEmpty(), "the session is gone");
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_CQ)).isEqualTo(1);
        assertThat(fx.server.succeeded(ControlProtocol.DESTROY_CHANNEL)).isEqualTo(1);
        assertThat(fx.server.succeeded(ControlProtocol.DEREG_MR)).isEqualTo(1);
        assertThat(fx.server.succeeded(ControlProtocol.DEALLOC_PD)).isEqualTo(1);
        // poll_cq reads the completion ring and req_notify_cq arms it (the program checked that it
        // returned 0): neither reaches the control socket.
        assertThat(fx.server.succeeded(ControlProtocol.POLL_CQ)).isZero();
        assertThat(fx.server.succeeded(ControlProtocol.REQ_NOTIFY_CQ)).isZero();
        // The context's async_fd is the vNIC's event connection.
        assertThat(fx.server.succeeded(ControlProtocol.OPEN_ASYNC)).isEqualTo(1);
        assertThat(fx.server.errors()).isZero();
    }
}
