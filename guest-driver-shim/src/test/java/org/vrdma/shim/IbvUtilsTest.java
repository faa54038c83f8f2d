package org.vrdma.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The unmodified ibverbs-utils binaries see the vNIC through the native library. */
class IbvUtilsTest {
    private ShimFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        ShimFixture.requireCommand("ibv_devices", "ibverbs-utils");
        ShimFixture.requireCommand("ibv_devinfo", "ibverbs-utils");
        fx = new ShimFixture();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (fx != null) {
            fx.close();
        }
    }

    @Test
    void ibvDevicesListsTheVnic() throws Exception {
        final ShimFixture.Result r = fx.run(List.of("ibv_devices"), Duration.ofSeconds(20));
        System.out.println(r.output());
        assertThat(r.exitCode()).isZero();
        // node GUID: EUI-64 of MAC 02:00:0a:00:00:05
        assertThat(r.output()).containsPattern("vrdma0\\s+00000afffe000005");
    }

    @Test
    void ibvDevinfoVerboseShowsARoceV2PortThatIsActive() throws Exception {
        final ShimFixture.Result r = fx.run(List.of("ibv_devinfo", "-v"), Duration.ofSeconds(20));
        System.out.println(r.output());
        assertThat(r.exitCode()).isZero();
        assertThat(r.output())
                .contains("hca_id:\tvrdma0")
                .containsPattern("transport:\\s+InfiniBand \\(0\\)")
                .containsPattern("state:\\s+PORT_ACTIVE \\(4\\)")
                .containsPattern("max_mtu:\\s+4096 \\(5\\)")
                .containsPattern("active_mtu:\\s+4096 \\(5\\)")
                .containsPattern("link_layer:\\s+Ethernet")
                .containsPattern("GID\\[\\s*0\\]:\\s+::ffff:10\\.0\\.0\\.5, RoCE v2");
    }

    @Test
    void withoutAServerThereIsNoDevice() throws Exception {
        fx.server.close();
        final ShimFixture.Result r = fx.run(List.of("ibv_devinfo"), Duration.ofSeconds(20));
        assertThat(r.output()).contains("No IB devices found").doesNotContain("vrdma0");
    }
}
