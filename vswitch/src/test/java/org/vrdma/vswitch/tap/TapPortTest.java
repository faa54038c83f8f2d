package org.vrdma.vswitch.tap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.vrdma.runtime.FaultConfig;
import org.vrdma.runtime.FrameSink;
import org.vrdma.vswitch.pipeline.DropReason;
import org.vrdma.vswitch.pipeline.EgressConfig;
import org.vrdma.vswitch.pipeline.EgressPort;
import org.vrdma.vswitch.pipeline.EniConfig;
import org.vrdma.vswitch.pipeline.UnderlayAddress;
import org.vrdma.vswitch.runtime.NettyRuntime;
import org.vrdma.vswitch.udp.VSwitchHost;

/**
 * Real TAP devices on one real-time vSwitch, each moved into a network namespace of its own as a
 * guest: the kernel's ping and iperf3 talk across the VPC through {@code /dev/net/tun}, proxy ARP
 * and the switch; a second VPC with the same addresses gets no answer and sees nothing; loss on a
 * delivery port shows in ping. Needs root (fails, never skips, without it).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TapPortTest {
    static final int RED = 100;
    static final int BLUE = 200;
    static final long MAC_1 = 0x02_00_0a_09_00_01L;
    static final long MAC_2 = 0x02_00_0a_09_00_02L;
    static final long MAC_3 = 0x02_00_0a_09_01_01L;

    TestNamespaces namespaces;
    EventLoopGroup group;
    VSwitchHost host;
    final List<TapPort> ports = new ArrayList<>();
    String ns1;
    String ns2;
    String ns3;

    /** The vNIC side of the ENIs: no RoCE is sent here, so it must stay empty. */
    long vnicFrames;

    final FrameSink vnic = (frame, nowNs) -> {
        vnicFrames++;
        frame.release();
    };

    @BeforeEach
    void setUp() throws Exception {
        namespaces = new TestNamespaces();
        ns1 = namespaces.add("1");
        ns2 = namespaces.add("2");
        ns3 = namespaces.add("3");
        NettyRuntime runtime = NettyRuntime.best();
        group = runtime.newEventLoopGroup(1, "tap-test");
        host = VSwitchHost.start(group, runtime, VSwitchHost.Options.loopback("tap"));
        host.call(vs -> {
            vs.addEni(EniConfig.of(1, MAC_1, "10.9.0.1", RED), vnic);
            vs.addEni(EniConfig.of(2, MAC_2, "10.9.0.2", RED), vnic);
            // BLUE overlaps RED: its ENI has RED's first address and no one else is in it.
            vs.addEni(EniConfig.of(3, MAC_3, "10.9.0.1", BLUE), vnic);
            return null;
        });
        ports.add(open(1, MAC_1, "10.9.0.1", ns1, "a"));
        ports.add(open(2, MAC_2, "10.9.0.2", ns2, "b"));
        ports.add(open(3, MAC_3, "10.9.0.1", ns3, "c"));
    }

    private TapPort open(int eniId, long mac, String ip, String ns, String suffix) throws Exception {
        String name = "vrt" + ProcessHandle.current().pid() % 100_000 + suffix;
        TapConfig config = new TapConfig(name, mac, UnderlayAddress.parseIpv4(ip), 24, 1500, ns);
        return TapPort.open(config, host.eventLoop(), host.vswitch(), eniId, PooledByteBufAllocator.DEFAULT);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (TapPort p : ports) {
                p.close();
            }
            if (host != null) {
                host.close();
            }
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            }
        } finally {
            namespaces.close();
        }
    }

    @Test
    void pingAndIperf3CrossTheVpcThroughTapsAndProxyArp() throws InterruptedException {
        TestNamespaces.Result ping =
                TestNamespaces.exec(ns1, 30, "ping", "-c", "5", "-i", "0.2", "-W", "2", "10.9.0.2");
        assertThat(ping.exit()).as(ping.output()).isZero();
        assertThat(ping.output()).contains("5 received");
        String arp =
                TestNamespaces.exec(ns1, 10, "ip", "neigh", "show", "10.9.0.2").output();
        assertThat(arp).as("proxy ARP answered with the router MAC").contains("02:76:72:00:00:01");

        Process server = startIperfServer(ns2, "10.9.0.2");
        try {
            // The server needs a moment to listen; retry a refused connection a few times.
            TestNamespaces.Result client = new TestNamespaces.Result(-1, "");
            for (int attempt = 0; attempt < 10 && client.exit() != 0; attempt++) {
                Thread.sleep(500);
                client = TestNamespaces.exec(
                        ns1, 60, "iperf3", "-c", "10.9.0.2", "-t", "2", "-f", "m", "--connect-timeout", "5000");
            }
            assertThat(client.exit()).as(client.output()).isZero();
            double mbps = receiverMbps(client.output());
            System.out.println("iperf3 over two TAP-backed ENIs of one vSwitch: " + mbps + " Mbit/s");
            assertThat(mbps).isPositive();
        } finally {
            server.destroyForcibly();
        }
        long[] counters = host.call(vs -> new long[] {
            vs.arpReplies(),
            vs.eni(1).counters().txPackets(),
            vs.eni(2).counters().rxPackets()
        });
        assertThat(counters[0]).isPositive();
        assertThat(counters[1]).isGreaterThan(5);
        assertThat(counters[2]).isGreaterThan(5);
        assertThat(ports.get(0).rxFrames()).isPositive();
        assertThat(ports.get(1).txFrames()).isPositive();
        assertThat(ports.get(0).txErrors() + ports.get(1).txErrors()).isZero();
        assertThat(vnicFrames).as("no TCP/IP reaches the vNIC side").isZero();
    }

    @Test
    void anOverlappingVpcNeverSeesTheFirstVpcsPingOrArp() {
        TestNamespaces.Result red = TestNamespaces.exec(ns1, 30, "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.9.0.2");
        assertThat(red.exit()).as(red.output()).isZero();
        // BLUE's 10.9.0.1 asks for 10.9.0.2, which exists only in RED: no answer, nothing delivered.
        TestNamespaces.Result blue =
                TestNamespaces.exec(ns3, 30, "ping", "-c", "3", "-i", "0.2", "-W", "1", "10.9.0.2");
        assertThat(blue.exit()).as(blue.output()).isNotZero();
        // A spoofed source from BLUE's guest: a second address on its TAP.
        TestNamespaces.check(List.of(
                "ip",
                "-n",
                ns3,
                "addr",
                "add",
                "10.9.0.9/32",
                "dev",
                ports.get(2).name()));
        TestNamespaces.exec(ns3, 30, "ping", "-c", "2", "-W", "1", "-I", "10.9.0.9", "10.9.0.5");

        long[] c = host.call(vs -> new long[] {
            vs.eni(3).counters().drops(DropReason.ARP_NO_ROUTE),
            vs.eni(3).counters().rxPackets(),
            vs.vpcCounters(BLUE).rxPackets(),
            vs.eni(3).counters().drops(DropReason.SPOOFED_SOURCE),
            vs.eni(2).counters().drops(DropReason.ARP_NO_ROUTE)
                    + vs.eni(1).counters().drops(DropReason.ARP_NO_ROUTE)
        });
        assertThat(c[0]).as("BLUE's ARP requests for RED's address, unanswered").isPositive();
        assertThat(c[1]).as("frames delivered to BLUE's ENI").isZero();
        assertThat(c[2]).isZero();
        assertThat(c[3]).as("spoofed source from BLUE's guest").isPositive();
        assertThat(c[4]).isZero();
        assertThat(ports.get(2).txFrames())
                .as("nothing was written to BLUE's TAP")
                .isZero();
    }

    @Test
    void lossOnADeliveryPortShowsInPingAndMatchesItsConfiguration() {
        double loss = 0.2;
        int count = 200;
        // Resolve first, so ARP is not what gets lost.
        TestNamespaces.exec(ns1, 30, "ping", "-c", "1", "-W", "2", "10.9.0.2");
        EgressPort port = host.call(
                vs -> vs.setDeliveryPort(2, EgressConfig.DEFAULT.withDataFaults(FaultConfig.randomLoss(loss))));
        TestNamespaces.Result ping = TestNamespaces.exec(
                ns1, 60, "ping", "-q", "-c", String.valueOf(count), "-i", "0.01", "-W", "1", "10.9.0.2");
        long[] stats = host.call(vs -> new long[] {port.dataLost(), port.txPackets()});
        Matcher m =
                Pattern.compile("(\\d+) packets transmitted, (\\d+) received").matcher(ping.output());
        assertThat(m.find()).as(ping.output()).isTrue();
        int received = Integer.parseInt(m.group(2));
        double sigma = Math.sqrt(count * loss * (1 - loss));
        assertThat((double) (count - received)).isCloseTo(count * loss, within(4 * sigma + 2));
        // Every frame through the port (echo requests, and any ARP refresh) judged at the configured rate.
        double portSigma = Math.sqrt(stats[1] * loss * (1 - loss));
        assertThat((double) stats[0]).isCloseTo(stats[1] * loss, within(4 * portSigma));
        assertThat(stats[1]).isGreaterThanOrEqualTo(count);
    }

    private static Process startIperfServer(String ns, String ip) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", ns, "iperf3", "-s", "-1", "-B", ip)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p;
        } catch (java.io.IOException e) {
            throw new AssertionError("cannot start iperf3 (./test.sh installs it)", e);
        }
    }

    static double receiverMbps(String iperfOutput) {
        Matcher m = Pattern.compile("([\\d.]+) Mbits/sec.*receiver").matcher(iperfOutput);
        assertThat(m.find()).as(iperfOutput).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
